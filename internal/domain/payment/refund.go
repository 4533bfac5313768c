package payment

import (
	"context"
	"errors"
	"fmt"

	"orderflow/internal/domain/refund"
	"orderflow/internal/domain/statement"
	"orderflow/internal/infra/pay"

	"go.uber.org/zap"
)

// refund applies a refund update. One under a number the ledger holds is
// orderflow's refund, confirmed (or failed) by its number. One under no
// number, or a number the ledger does not hold (the provider made it up),
// that names the provider's refund id is a refund made at the provider —
// in its dashboard — that orderflow never asked for: succeeded, and naming
// its payment and amount, it is recorded against its payment and listed as
// an unknown_refund break at once, as its statement line would be, so the
// statement that lists it later changes nothing. An update that names no
// provider refund id keeps the number's answer (refund.ErrNotFound: the
// provider sends it again).
func (n *Notifications) refund(ctx context.Context, provider string, u *pay.RefundUpdate) error {
	var err error = refund.ErrNotFound
	if u.RefundNo != "" {
		err = n.Refunds.CallbackFrom(ctx, provider, u.RefundNo, u.Status)
	}
	if !errors.Is(err, refund.ErrNotFound) || u.Ref == "" {
		return err
	}
	log := n.Log.With(zap.String("provider", provider), zap.String("ref", u.Ref), zap.String("refund_no", u.RefundNo),
		zap.String("trade_no", u.TradeNo), zap.Int64("amount_cents", u.AmountCents), zap.String("status", u.Status))
	switch {
	case u.Status != pay.RefundSucceeded:
		// No money has left yet (or none will): its success, or the
		// statement, says when it does.
		log.Info("refund made at the provider, not succeeded: nothing to record yet")
		return nil
	case u.TradeNo == "" || u.AmountCents <= 0:
		// Sending it again would not add what it lacks; the day's
		// statement lists the refund whole.
		log.Warn("refund made at the provider names no payment or amount: left to the statement")
		return nil
	}
	err = n.Statements.RefundSeen(ctx, provider, pay.StatementLine{Ref: u.Ref, TradeNo: u.TradeNo, AmountCents: u.AmountCents, At: u.At})
	if errors.Is(err, statement.ErrNotAProviderRefund) {
		log.Warn("refund made at the provider unusable")
		return fmt.Errorf("%s refund notification %s: %w", provider, u.Ref, ErrUnusable)
	}
	return err
}
