package refund_test

import (
	"strings"
	"testing"

	"orderflow/internal/domain/refund"
	"orderflow/internal/infra/pay"
)

// A refund's number is its idempotency key at the provider: the same
// (order, trade) or (order, operator key) always gives the same number, two
// different ones never collide across providers or kinds, and every number,
// a retry's generation suffix included, fits the providers' 64 characters.
func TestNumbers(t *testing.T) {
	long := strings.Repeat("9", 64) // the longest order and trade numbers
	for _, c := range []struct {
		name string
		a, b string
		same bool
	}{
		{"refund.Number is the simulator's NumberAt", refund.Number("O1", "T1"), refund.NumberAt(pay.NamePaysim, "O1", "T1"), true},
		{"no provider is the simulator (refunds from before providers)", refund.NumberAt("", "O1", "T1"), refund.Number("O1", "T1"), true},
		{"repeatable", refund.NumberAt(pay.NameAlipay, "O1", "T1"), refund.NumberAt(pay.NameAlipay, "O1", "T1"), true},
		{"another provider, same trade number", refund.NumberAt(pay.NameAlipay, "O1", "T1"), refund.NumberAt(pay.NameWechat, "O1", "T1"), false},
		{"another trade", refund.Number("O1", "T1"), refund.Number("O1", "T2"), false},
		{"another order", refund.Number("O1", "T1"), refund.Number("O2", "T1"), false},
		{"operator key repeatable", refund.OperatorNumber("O1", "k"), refund.OperatorNumber("O1", "k"), true},
		{"operator key is not a trade number", refund.OperatorNumber("O1", "T1"), refund.Number("O1", "T1"), false},
		{"operator key of another order", refund.OperatorNumber("O1", "k"), refund.OperatorNumber("O2", "k"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if (c.a == c.b) != c.same {
				t.Errorf("%s vs %s: same = %v, want %v", c.a, c.b, c.a == c.b, c.same)
			}
		})
	}
	t.Run("length", func(t *testing.T) {
		for _, no := range []string{refund.Number(long, long), refund.NumberAt(pay.NameStripe, long, long), refund.OperatorNumber(long, strings.Repeat("k", 255)),
			refund.NumberGen(refund.Number(long, long), 1_000_000)} {
			if !strings.HasPrefix(no, "RF") || len(no) > 64 {
				t.Errorf("%q: %d characters; want RF… within 64", no, len(no))
			}
		}
	})
}

// The first generation of a refund keeps its base number (what refund.Open
// wrote); a later one is the base with its generation appended.
func TestNumberGen(t *testing.T) {
	base := refund.Number("O1", "T1")
	for gen, want := range map[int]string{0: base, 1: base, 2: base + "-2", 10: base + "-10"} {
		if got := refund.NumberGen(base, gen); got != want {
			t.Errorf("refund.NumberGen(base, %d) = %q, want %q", gen, got, want)
		}
	}
}
