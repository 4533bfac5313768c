package console

import (
	"testing"
	"time"
)

// A cookie's signature and expiry, checked before the ledger is read (the
// ledger's half — a session ended by a log-out — is tests/console's).
func TestSessionCookie(t *testing.T) {
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s := newSessions("admin-token-0001", nil, clock)
	id := "0123456789abcdef0123456789abcdef"
	value := s.sign(id, now.Add(sessionTTL))
	other := newSessions("admin-token-0002", nil, clock).sign(id, now.Add(sessionTTL))
	mac := value[len(value)-64:]
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
		{"expiry pushed out", id + ".99999999999." + mac, 0, false},
		{"another session's id", "fedcba9876543210fedcba9876543210" + value[len(id):], 0, false},
		{"signature cut", value[:len(value)-2], 0, false},
		{"no signature", id + ".99999999999", 0, false},
		{"the admin token itself", "admin-token-0001", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			at := now.Add(tc.after)
			s.now = func() time.Time { return at }
			gotID, got := s.signed(tc.value)
			if got != tc.want || (got && gotID != id) {
				t.Errorf("signed = %q, %v; want %v", gotID, got, tc.want)
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
