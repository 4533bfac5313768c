package order_test

import (
	"strings"
	"testing"

	"orderflow/internal/domain/bounds"
	"orderflow/internal/domain/order"
	"orderflow/internal/testenv"
)

// The bounds of an operator's manual payment, checked before anything is
// read: each refusal names its field's code.
func TestCheckManual(t *testing.T) {
	ok := order.ManualPayment{OrderNo: "O1", Reference: "BANK-1", AmountCents: 900}
	for _, c := range []struct {
		name string
		edit func(*order.ManualPayment)
		code string // "" accepted
	}{
		{"plain", func(*order.ManualPayment) {}, ""},
		{"64 characters of reference", func(m *order.ManualPayment) { m.Reference = strings.Repeat("é", 64) }, ""},
		{"note of 255", func(m *order.ManualPayment) { m.Note = strings.Repeat("n", 255) }, ""},
		{"the largest amount", func(m *order.ManualPayment) { m.AmountCents = bounds.MaxCents }, ""},
		{"empty reference", func(m *order.ManualPayment) { m.Reference = "" }, "invalid_reference"},
		{"65 characters of reference", func(m *order.ManualPayment) { m.Reference = strings.Repeat("r", 65) }, "invalid_reference"},
		{"tab in reference", func(m *order.ManualPayment) { m.Reference = "A\tB" }, "invalid_reference"},
		{"zero amount", func(m *order.ManualPayment) { m.AmountCents = 0 }, "invalid_amount"},
		{"amount past the bound", func(m *order.ManualPayment) { m.AmountCents = bounds.MaxCents + 1 }, "invalid_amount"},
		{"note of 256", func(m *order.ManualPayment) { m.Note = strings.Repeat("n", 256) }, "invalid_note"},
		{"newline in note", func(m *order.ManualPayment) { m.Note = "a\nb" }, "invalid_note"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := ok
			c.edit(&m)
			err := order.CheckManual(m)
			if got := testenv.InvalidCode(t, err); got != c.code {
				t.Errorf("got %v (code %q), want %q", err, got, c.code)
			}
		})
	}
}
