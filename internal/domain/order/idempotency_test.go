package order

import (
	"strings"
	"testing"
)

func TestValidIdempotencyKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  string
		want bool
	}{
		{"one byte", "a", true},
		{"255 bytes", strings.Repeat("k", 255), true},
		{"every visible ASCII byte", "!\"#$%&'()*+,-./0123456789:;<=>?@AZ[\\]^_`az{|}~", true},
		{"a uuid", "5f0c2a1e-9b7d-4c3e-8f21-0a6b5d4e3c2b", true},
		{"empty", "", false},
		{"256 bytes", strings.Repeat("k", 256), false},
		{"a space", "a b", false},
		{"a tab", "a\tb", false},
		{"DEL", "a\x7fb", false},
		{"a NUL", "a\x00b", false},
		{"UTF-8 letter", "clé", false},
		{"not UTF-8", "k\xff", false},
	} {
		if got := ValidIdempotencyKey(tc.key); got != tc.want {
			t.Errorf("%s: ValidIdempotencyKey(%q) = %v, want %v", tc.name, tc.key, got, tc.want)
		}
	}
}

func TestRequestHash(t *testing.T) {
	base := CreateRequest{UserID: 1, ProductID: 7, Quantity: 2, IdempotencyKey: "k"}
	same := CreateRequest{UserID: 1, ProductID: 7, Quantity: 2, IdempotencyKey: "k"}
	if requestHash(base) != requestHash(same) {
		t.Error("equal creates have different fingerprints")
	}
	for _, other := range []CreateRequest{
		{UserID: 1, ProductID: 8, Quantity: 2},
		{UserID: 1, ProductID: 7, Quantity: 3},
		{UserID: 1, ProductID: 72, Quantity: 0}, // the fields are delimited: 7,2 is not 72,0
	} {
		if requestHash(base) == requestHash(other) {
			t.Errorf("fingerprint of %+v equals that of %+v", other, base)
		}
	}
	if h := requestHash(base); len(h) != 64 {
		t.Errorf("fingerprint %q is not 64 hex characters", h)
	}
}
