package order

import (
	"context"
	"fmt"

	"orderflow/apperr"
	"orderflow/model"
	"orderflow/refund"

	"go.uber.org/zap"
)

// Errors of the operator refund.
var (
	ErrNotFailed        = apperr.New(apperr.Conflict, "invalid_status", "only a failed order can be refunded by an operator")
	ErrAlreadyDelivered = apperr.New(apperr.Conflict, "already_delivered", "this order's effect was applied; retry it to finish instead of refunding")
)

// RefundFailed is the operator's refund of a failed order: failed→refunding,
// its LOCKED keys recycled (stock flow type 4) and its payment refunded, in
// one transaction; then the Redis stock restore.
func (s *Service) RefundFailed(ctx context.Context, orderNo string) (string, error) {
	o, err := s.load(ctx, orderNo)
	if err != nil {
		return "", err
	}
	if o.Status != model.OrderFailed || o.TradeNo == nil {
		return "", ErrNotFailed
	}
	delivered, err := s.store.HasEffect(ctx, o.ID)
	if err != nil {
		return "", fmt.Errorf("refund order %s: %w", orderNo, err)
	}
	if delivered {
		return "", ErrAlreadyDelivered
	}
	now := s.clock.Now()
	var moved bool
	var taskID string
	err = s.store.InTx(ctx, func(tx *model.Store) (err error) {
		moved, err = tx.MoveOrder(ctx, o.ID, o.OrderNo, model.OrderMove{
			From: model.OrderFailed, To: model.OrderRefunding, Reason: "operator refund", At: now,
		})
		if err != nil || !moved {
			return err
		}
		if err := releaseStock(ctx, tx, o, model.FlowRefundRestore, now); err != nil {
			return err
		}
		taskID, err = refund.Open(ctx, tx, o, *o.TradeNo, o.AmountCents, model.RefundReasonOperator, now)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("refund order %s: %w", orderNo, err)
	}
	if !moved {
		return "", ErrNotFailed
	}
	s.invalidate(ctx, o.ID, o.OrderNo)
	if err := s.restoreRedis(ctx, o, model.FlowRefundRestore); err != nil {
		// Nothing runs this call again: a create that finds the counter
		// short checks the ledger and repairs it (checkShort), and
		// reconciliation rebuilds it.
		s.log.Warn("stock counter restore failed; the next short answer or reconciliation repairs it", zap.String("order_no", orderNo), zap.Error(err))
	}
	s.relay.Send(ctx, taskID)
	s.log.Info("failed order refunded by operator", zap.String("order_no", orderNo))
	return refund.Number(o.OrderNo, *o.TradeNo), nil
}
