package webhook_test

import (
	"errors"
	"regexp"
	"strconv"
	"testing"
	"time"

	"orderflow/internal/domain/webhook"
)

// The signature's rules as a receiver meets them: the header's format, a
// MAC over the timestamp and the exact body under the shared secret, and a
// timestamp outside the tolerance refused as a replay.
func TestSignVerify(t *testing.T) {
	t.Parallel()
	const secret = "s3cret"
	at := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	body := []byte(`{"id":"evt_1","type":"order.paid"}`)
	header := webhook.Sign(secret, at, body)

	ts := "t=" + strconv.FormatInt(at.Unix(), 10)
	if format := regexp.MustCompile(`^` + ts + `,v1=[0-9a-f]{64}$`); !format.MatchString(header) {
		t.Fatalf("Sign = %q, want t=<unix seconds>,v1=<64 hex digits>", header)
	}
	if again := webhook.Sign(secret, at, body); again != header {
		t.Errorf("Sign is not deterministic: %q then %q", header, again)
	}
	other := webhook.Sign("old-secret", at, body)
	const tolerance = 5 * time.Minute
	for _, tc := range []struct {
		name   string
		secret string
		header string
		body   []byte
		now    time.Time
		ok     bool
	}{
		{"as signed", secret, header, body, at, true},
		{"within tolerance after", secret, header, body, at.Add(tolerance), true},
		{"within tolerance before (clock skew)", secret, header, body, at.Add(-tolerance), true},
		{"one of several v1 matches (secret rotation)", secret, other + ",v1=" + header[len(ts+",v1="):], body, at, true},
		{"tampered body", secret, header, []byte(`{"id":"evt_1","type":"order.closed"}`), at, false},
		{"body with a byte more", secret, header, append(append([]byte{}, body...), ' '), at, false},
		{"another secret", "not-the-secret", header, body, at, false},
		{"old timestamp (a replay)", secret, header, body, at.Add(tolerance + time.Second), false},
		{"timestamp from the future", secret, header, body, at.Add(-tolerance - time.Second), false},
		{"timestamp changed, MAC kept", secret, "t=" + strconv.FormatInt(at.Unix()+1, 10) + header[len(ts):], body, at, false},
		{"no v1", secret, ts, body, at, false},
		{"no timestamp", secret, header[len(ts+","):], body, at, false},
		{"empty", secret, "", body, at, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := webhook.Verify(tc.secret, tc.header, tc.body, tc.now, tolerance)
			switch {
			case tc.ok && err != nil:
				t.Errorf("Verify(%q) = %v, want nil", tc.header, err)
			case !tc.ok && !errors.Is(err, webhook.ErrBadSignature):
				t.Errorf("Verify(%q) = %v, want ErrBadSignature", tc.header, err)
			}
		})
	}
}
