package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader carries a delivery's signature (SPEC "Shop webhooks").
const SignatureHeader = "X-Orderflow-Signature"

// Sign is the header value for body posted at t:
// "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" under secret>".
// The timestamp is inside the MAC, so a receiver that refuses old ones
// refuses replays.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

func mac(secret, ts string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// ErrBadSignature is Verify's answer for a header that does not match.
var ErrBadSignature = errors.New("webhook signature does not verify")

// Verify checks a delivery as a receiver should: the header parses, its
// timestamp is within tolerance of now (an old one is a replay), and one of
// its v1 MACs matches the raw body. docs/webhooks.md shows it in a receiver.
func Verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return fmt.Errorf("%w: malformed header %q", ErrBadSignature, header)
	}
	if age := now.Sub(time.Unix(sec, 0)); age > tolerance || age < -tolerance {
		return fmt.Errorf("%w: timestamp %s is %v from now (tolerance %v)", ErrBadSignature, ts, age, tolerance)
	}
	want := mac(secret, ts, body)
	for _, s := range sigs {
		if hmac.Equal([]byte(s), []byte(want)) {
			return nil
		}
	}
	return ErrBadSignature
}
