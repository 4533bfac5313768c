package order

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/domain/bounds"
	"orderflow/internal/domain/trail"
	"orderflow/internal/infra/pay"
	"orderflow/model"
)

// Bounds of an operator's manual payment: the reference is the payment's
// trade number (payments.trade_no and refunds.trade_no are VARCHAR(64)).
const (
	maxReference = 64
	maxPayNote   = 255
)

// Errors of a manual payment's input.
var (
	ErrBadReference = apperr.New(apperr.Invalid, "invalid_reference", "reference must be 1..64 characters, without control characters")
	ErrBadPayNote   = apperr.New(apperr.Invalid, "invalid_note", "note must be at most 255 characters, without control characters")
)

// ManualPayment is money an operator saw arrive outside every provider (a
// bank transfer, a provider's dashboard): Reference is how they name it
// (the bank's or the dashboard's transaction number).
type ManualPayment struct {
	OrderNo     string
	Reference   string
	AmountCents int64
	Note        string
}

// ConfirmManual records an operator's manual payment through the one
// payment path (Pay) as provider manual with trade number Reference: a
// pending order is paid and delivered, a closed one refunded as any late
// payment (its refund handed to an operator: no provider holds the money),
// a wrong amount is a mismatch, and the same reference again changes
// nothing. The audit entry is written in the payment's transaction. It
// returns the order's status after the payment.
func (s *Service) ConfirmManual(ctx context.Context, m ManualPayment) (model.OrderStatus, error) {
	m.Reference, m.Note = strings.TrimSpace(m.Reference), strings.TrimSpace(m.Note)
	if err := checkManual(m); err != nil {
		return 0, err
	}
	p := Payment{Provider: pay.NameManual, OrderNo: m.OrderNo, TradeNo: m.Reference, AmountCents: m.AmountCents, Note: m.Note}
	if _, err := s.Pay(ctx, p); err != nil {
		return 0, err
	}
	o, err := s.load(ctx, m.OrderNo)
	if err != nil {
		return 0, err
	}
	return o.Status, nil
}

// checkManual refuses a manual payment no order can take before anything
// is read or written.
func checkManual(m ManualPayment) error {
	if n := utf8.RuneCountInString(m.Reference); n == 0 || n > maxReference || hasControl(m.Reference) {
		return ErrBadReference
	}
	if err := bounds.CheckAmount(m.AmountCents, 1); err != nil {
		return err
	}
	if utf8.RuneCountInString(m.Note) > maxPayNote || hasControl(m.Note) {
		return ErrBadPayNote
	}
	return nil
}

func hasControl(s string) bool {
	return !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl)
}

// paymentDetail is the audit detail of a payment an operator confirmed:
// what it was and what it did to the order (model.Payment*).
func paymentDetail(p Payment, res PayResult) trail.Detail {
	d := trail.Detail{"provider": p.Provider, "trade_no": p.TradeNo, "amount_cents": p.AmountCents, "disposition": res.Disposition}
	if p.Note != "" {
		d["reason"] = p.Note
	}
	return d
}
