// Package payment applies a provider's verified notification: a payment
// goes down the one payment path (order.Service.Pay), a refund update down
// the refund confirmation path (refund.Service.CallbackFrom) or, for a
// refund made at the provider that orderflow never asked for, to the
// statement's record of it (statement.Service.RefundSeen); a dispute to the
// dispute record (dispute.Service.Apply). Every provider's
// notification endpoint calls it, whatever its wire format.
package payment

import (
	"context"
	"errors"
	"fmt"

	"orderflow/internal/domain/bounds"
	"orderflow/internal/domain/dispute"
	"orderflow/internal/domain/order"
	"orderflow/internal/domain/refund"
	"orderflow/internal/domain/statement"
	"orderflow/internal/infra/pay"

	"go.uber.org/zap"
)

// Notifications applies verified notifications.
type Notifications struct {
	Orders   *order.Service
	Refunds  *refund.Service
	Disputes *dispute.Service
	// Statements records a refund made at the provider that orderflow
	// never asked for, as its statement line would be.
	Statements *statement.Service
	Log        *zap.Logger
}

// ErrUnusable is a verified notification orderflow cannot record (a field
// missing or out of bounds): the provider is told to send it again.
var ErrUnusable = errors.New("notification cannot be recorded")

// Notified applies what a provider's notification says. The endpoint has
// verified it first (pay.Provider.Parse: nothing is read before that), so
// ev is the provider's word. nil means recorded (repeats included): the
// provider may stop sending it.
func (n *Notifications) Notified(ctx context.Context, provider string, ev *pay.Event) error {
	var err error
	switch {
	case ev.Paid != nil:
		pd := ev.Paid
		if pd.OrderNo == "" || pd.TradeNo == "" || len(pd.TradeNo) > 64 || bounds.CheckAmount(pd.AmountCents, 1) != nil {
			n.Log.Warn("provider payment notification unusable", zap.String("provider", provider),
				zap.String("order_no", pd.OrderNo), zap.String("trade_no", pd.TradeNo), zap.Int64("amount_cents", pd.AmountCents))
			return fmt.Errorf("%s payment notification: %w", provider, ErrUnusable)
		}
		_, err = n.Orders.Pay(ctx, order.Payment{Provider: provider, OrderNo: pd.OrderNo, TradeNo: pd.TradeNo, AmountCents: pd.AmountCents, At: pd.At})
	case ev.Refund != nil:
		err = n.refund(ctx, provider, ev.Refund)
	case ev.Dispute != nil:
		err = n.Disputes.Apply(ctx, provider, ev.Dispute)
	}
	if err != nil {
		n.Log.Warn("provider notification not recorded", zap.String("provider", provider), zap.Error(err))
	}
	return err
}
