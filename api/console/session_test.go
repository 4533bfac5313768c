package console

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestSessionCookie(t *testing.T) {
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s := newSessions("admin-token-0001", clock)
	value := s.issue()
	other := newSessions("admin-token-0002", clock).issue()

	request := func(v string) *http.Request {
		r := httptest.NewRequest("GET", "/console/", nil)
		if v != "" {
			r.AddCookie(&http.Cookie{Name: sessionCookie, Value: v})
		}
		return r
	}
	tests := []struct {
		name  string
		value string
		after time.Duration
		want  bool
	}{
		{"fresh", value, 0, true},
		{"an hour before it expires", value, sessionTTL - time.Hour, true},
		{"expired", value, sessionTTL, false},
		{"no cookie", "", 0, false},
		{"signed with another admin token", other, 0, false},
		{"expiry pushed out", "99999999999" + value[len(value)-65:], 0, false},
		{"signature cut", value[:len(value)-2], 0, false},
		{"no signature", "99999999999", 0, false},
		{"the admin token itself", "admin-token-0001", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			at := now.Add(tc.after)
			s.now = func() time.Time { return at }
			if _, got := s.valid(request(tc.value)); got != tc.want {
				t.Errorf("valid = %v, want %v", got, tc.want)
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
