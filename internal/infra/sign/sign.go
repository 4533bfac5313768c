// Package sign computes and checks the HMAC-SHA256 signatures that orderflow
// and the payment provider put on every request and callback (header X-Signature).
package sign

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// Header is the HTTP header that carries the signature.
const Header = "X-Signature"

// Sum returns the hex HMAC-SHA256 of body under secret.
func Sum(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Valid reports whether sig is the signature of body under secret,
// comparing in constant time.
func Valid(secret string, body []byte, sig string) bool {
	want, err := hex.DecodeString(sig)
	if err != nil || len(want) != sha256.Size {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hmac.Equal(m.Sum(nil), want)
}
