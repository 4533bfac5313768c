package payfake

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
)

// RSAKeys generates n fresh 2048-bit RSA keys: a fake's own, the
// merchant's it verifies, and any it signs forgeries with.
func RSAKeys(n int) ([]*rsa.PrivateKey, error) {
	keys := make([]*rsa.PrivateKey, n)
	for i := range keys {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	return keys, nil
}

// PEM is der in a PEM block of typ ("PUBLIC KEY", "PRIVATE KEY", …), as
// the settings that configure orderflow for a fake hold keys.
func PEM(typ string, der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
}
