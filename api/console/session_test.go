package console

import (
	"testing"
	"time"

	"orderflow/internal/infra/operators"
)

func operatorSet(t *testing.T, adminToken string) *operators.Set {
	t.Helper()
	s, err := operators.New(adminToken, "ann.b:viewer:viewer-token-000001")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A cookie's signature and expiry, checked before the ledger is read (the
// ledger's half — a session ended by a log-out — is tests/console's).
func TestSessionCookie(t *testing.T) {
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s := newSessions(operatorSet(t, "admin-token-00000001"), nil, clock)
	id := "0123456789abcdef0123456789abcdef"
	value := s.sign(id, now.Add(sessionTTL), "ann.b")
	other := newSessions(operatorSet(t, "admin-token-00000002"), nil, clock).sign(id, now.Add(sessionTTL), "ann.b")
	mac := value[len(value)-len(".ann.b")-64 : len(value)-len(".ann.b")]
	tests := []struct {
		name  string
		value string
		after time.Duration
		want  bool
	}{
		{"fresh", value, 0, true},
		{"an hour before it expires", value, sessionTTL - time.Hour, true},
		{"expired", value, sessionTTL, false},
		{"empty", "", 0, false},
		{"signed with another admin token", other, 0, false},
		{"expiry pushed out", id + ".99999999999." + mac + ".ann.b", 0, false},
		{"another operator's name", value[:len(value)-len("ann.b")] + "admin", 0, false},
		{"name cut", value[:len(value)-2], 0, false},
		{"another session's id", "fedcba9876543210fedcba9876543210" + value[len(id):], 0, false},
		{"no name", value[:len(value)-len(".ann.b")], 0, false},
		{"no signature", id + ".99999999999", 0, false},
		{"the admin token itself", "admin-token-00000001", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			at := now.Add(tc.after)
			s.now = func() time.Time { return at }
			gotID, gotName, got := s.signed(tc.value)
			if got != tc.want || (got && (gotID != id || gotName != "ann.b")) {
				t.Errorf("signed = %q, %q, %v; want %v", gotID, gotName, got, tc.want)
			}
		})
	}
	if s.csrf(value) == s.csrf(other) || s.csrf(value) == "" {
		t.Errorf("CSRF tokens of two sessions agree or are empty")
	}
}

func TestAge(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{42 * time.Second, "42s"},
		{7*time.Minute + 30*time.Second, "7m"},
		{3*time.Hour + 12*time.Minute, "3h12m"},
		{52 * time.Hour, "2d4h"},
	}
	for _, tc := range tests {
		if got := age(tc.d); got != tc.want {
			t.Errorf("age(%s) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
