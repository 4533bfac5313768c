package order

import (
	"context"
	"fmt"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/domain/refund"
	"orderflow/internal/domain/trail"
	"orderflow/model"

	"go.uber.org/zap"
)

// Errors of the operator refund.
var (
	ErrNotFailed        = apperr.New(apperr.Conflict, "invalid_status", "only a failed order can be refunded by an operator")
	ErrAlreadyDelivered = apperr.New(apperr.Conflict, "already_delivered", "this order's effect was applied; retry it to finish instead of refunding")
)

// RefundFailed is the operator's refund of a failed order: failed→refunding,
// its LOCKED keys recycled (stock flow type 4) and what is left of its
// payment refunded (all of it unless an operator refunded a part already),
// in one transaction; then the Redis stock restore. An order with nothing
// left to return (free, or refunded in full by parts) moves
// failed→refunding→refunded at once, its stock released the same way, with
// no refund record. It returns the refund's number ("" when there was
// nothing to return) and the status the order is left in.
func (s *Service) RefundFailed(ctx context.Context, orderNo string) (string, model.OrderStatus, error) {
	o, err := s.load(ctx, orderNo)
	if err != nil {
		return "", 0, err
	}
	left := o.AmountCents - o.RefundedCents
	free := left == 0 // nothing (left) to return
	if o.Status != model.OrderFailed || (o.TradeNo == nil && o.AmountCents != 0) {
		return "", 0, ErrNotFailed
	}
	delivered, err := s.store.HasEffect(ctx, o.ID)
	if err != nil {
		return "", 0, fmt.Errorf("refund order %s: %w", orderNo, err)
	}
	if delivered {
		return "", 0, ErrAlreadyDelivered
	}
	provider := ""
	if !free {
		if provider, err = s.paidThrough(ctx, o); err != nil {
			return "", 0, fmt.Errorf("refund order %s: %w", orderNo, err)
		}
	}
	now := s.clock.Now()
	var moved bool
	var r *model.Refund
	err = s.store.InTx(ctx, func(tx *model.Store) (err error) {
		moved, err = tx.MoveOrder(ctx, o.ID, o.OrderNo, model.OrderMove{
			From: model.OrderFailed, To: model.OrderRefunding, Reason: "operator refund", At: now,
		})
		if err != nil || !moved {
			return err
		}
		if err := tx.ReleaseStockLater(ctx, []model.OrderClose{model.CloseOf(o)}, model.FlowRefundRestore, now); err != nil {
			return err
		}
		if free {
			if err := trail.Record(ctx, tx, now, trail.OrderRefund, o.OrderNo, trail.Detail{
				"from": model.OrderFailed.String(), "to": model.OrderRefunded.String(), "amount_cents": int64(0),
			}); err != nil {
				return err
			}
			return tx.MoveOrderOrAbortLater(ctx, o.ID, o.OrderNo, model.OrderMove{
				From: model.OrderRefunding, To: model.OrderRefunded, Reason: "nothing (left) to return", At: now,
			})
		}
		// Counted against the payment like any operator refund: a part
		// refunded meanwhile makes this one refund_exceeds_payment.
		r, _, err = refund.Open(ctx, tx, o, refund.Request{Provider: provider, TradeNo: *o.TradeNo, AmountCents: left,
			TradeCents: o.AmountCents, Reason: model.RefundReasonOperator, OfPayment: true}, now)
		if err != nil {
			return err
		}
		return trail.Record(ctx, tx, now, trail.OrderRefund, o.OrderNo, trail.Detail{
			"from": model.OrderFailed.String(), "to": model.OrderRefunding.String(),
			"amount_cents": r.AmountCents, "refund_no": r.RefundNo,
		})
	})
	if err != nil {
		return "", 0, fmt.Errorf("refund order %s: %w", orderNo, err)
	}
	if !moved {
		return "", 0, ErrNotFailed
	}
	if err := s.restoreRedis(ctx, o, model.FlowRefundRestore); err != nil {
		// Nothing runs this call again: a create that finds the counter
		// short checks the ledger and repairs it (checkShort), and
		// reconciliation rebuilds it.
		s.log.Warn("stock counter restore failed; the next short answer or reconciliation repairs it", zap.String("order_no", orderNo), zap.Error(err))
	}
	if free {
		s.log.Info("failed free order refunded by operator; nothing to return", zap.String("order_no", orderNo))
		return "", model.OrderRefunded, nil
	}
	s.log.Info("failed order refunded by operator", zap.String("order_no", orderNo), zap.Int64("amount_cents", r.AmountCents))
	return r.RefundNo, model.OrderRefunding, nil
}

// paidThrough is the provider whose payment moved the order to paid: its
// refund goes back through it.
func (s *Service) paidThrough(ctx context.Context, o *model.Order) (string, error) {
	pays, err := s.store.PaymentsForOrder(ctx, o.ID)
	if err != nil {
		return "", err
	}
	for _, p := range pays {
		if p.TradeNo == *o.TradeNo && p.Disposition == model.PaymentApplied {
			return p.Provider, nil
		}
	}
	return "", fmt.Errorf("no applied payment for trade %s", *o.TradeNo)
}
