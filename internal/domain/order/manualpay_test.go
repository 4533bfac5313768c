package order

import (
	"errors"
	"orderflow/internal/domain/bounds"
	"strings"
	"testing"

	"orderflow/internal/domain/apperr"
)

// The bounds of an operator's manual payment, checked before anything is
// read: each refusal names its field's code.
func TestCheckManual(t *testing.T) {
	ok := ManualPayment{OrderNo: "O1", Reference: "BANK-1", AmountCents: 900}
	for _, c := range []struct {
		name string
		edit func(*ManualPayment)
		code string // "" accepted
	}{
		{"plain", func(*ManualPayment) {}, ""},
		{"64 characters of reference", func(m *ManualPayment) { m.Reference = strings.Repeat("é", 64) }, ""},
		{"note of 255", func(m *ManualPayment) { m.Note = strings.Repeat("n", 255) }, ""},
		{"the largest amount", func(m *ManualPayment) { m.AmountCents = bounds.MaxCents }, ""},
		{"empty reference", func(m *ManualPayment) { m.Reference = "" }, "invalid_reference"},
		{"65 characters of reference", func(m *ManualPayment) { m.Reference = strings.Repeat("r", 65) }, "invalid_reference"},
		{"tab in reference", func(m *ManualPayment) { m.Reference = "A\tB" }, "invalid_reference"},
		{"zero amount", func(m *ManualPayment) { m.AmountCents = 0 }, "invalid_amount"},
		{"amount past the bound", func(m *ManualPayment) { m.AmountCents = bounds.MaxCents + 1 }, "invalid_amount"},
		{"note of 256", func(m *ManualPayment) { m.Note = strings.Repeat("n", 256) }, "invalid_note"},
		{"newline in note", func(m *ManualPayment) { m.Note = "a\nb" }, "invalid_note"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := ok
			c.edit(&m)
			err := checkManual(m)
			var ae *apperr.Error
			switch {
			case c.code == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.code != "" && (!errors.As(err, &ae) || ae.Code != c.code || ae.Kind != apperr.Invalid):
				t.Errorf("got %v, want %s", err, c.code)
			}
		})
	}
}
