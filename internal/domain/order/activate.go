package order

import (
	"context"
	"errors"
	"fmt"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/domain/bounds"
	"orderflow/model"

	"go.uber.org/zap"
)

// claim is a worker's hold on an order while it delivers (activatebatch.go
// claims, deliver.go delivers).
type claim struct {
	order *model.Order
	token string
}

// giveUpOrRelease handles a failed attempt: past the attempt cap the order is
// failed and the admin told; otherwise the claim is released (claimed→paid)
// and the error returned so asynq retries. Both run on a context that
// survives the task's cancellation.
func (s *Service) giveUpOrRelease(ctx context.Context, c *claim, cause error, log *zap.Logger) error {
	ctx = context.WithoutCancel(ctx)
	cause = fmt.Errorf("activate %s (attempt %d): %w", c.order.OrderNo, c.order.Attempts, cause)
	if c.order.Attempts >= s.set.MaxAttempts {
		if err := s.fail(ctx, c.order, model.OrderClaimed, c.token, exhausted(c.order), log); err != nil {
			return errors.Join(cause, err)
		}
		return apperr.Final(cause)
	}
	now := s.clock.Now()
	var moved bool
	err := s.store.InTx(ctx, func(tx *model.Store) (err error) {
		moved, err = tx.MoveOrder(ctx, c.order.ID, c.order.OrderNo, model.OrderMove{
			From: model.OrderClaimed, To: model.OrderPaid, Reason: "release", At: now, Token: c.token,
			Set: map[string]any{"claim_token": nil},
		})
		return err
	})
	if err != nil {
		// Not swallowed: the stuck-claim job will reset it, but the operator must see why.
		log.Error("release claim failed", zap.Error(err))
		return errors.Join(cause, fmt.Errorf("release claim of %s: %w", c.order.OrderNo, err))
	}
	log.Warn("activation attempt failed; claim released for retry", zap.Bool("released", moved), zap.Error(cause))
	return cause
}

// refuse fails a claimed order whose delivery broke a bound: no retry can
// change the numbers, so it is failed at once (claimed→failed, the bound's
// code in the event) and the admin told; nothing of its effect was written.
func (s *Service) refuse(ctx context.Context, c *claim, cause error, log *zap.Logger) error {
	ctx = context.WithoutCancel(ctx)
	var bound *bounds.BoundError
	if !errors.As(cause, &bound) {
		return s.giveUpOrRelease(ctx, c, cause, log)
	}
	o := c.order
	why := failure{
		reason: "out of bounds: " + bound.Code,
		message: fmt.Sprintf("order %s cannot be delivered: %s (%s); nothing was applied; refund it from the admin API",
			o.OrderNo, bound.Code, bound.Message),
	}
	cause = fmt.Errorf("activate %s: %w", o.OrderNo, cause)
	if err := s.fail(ctx, o, model.OrderClaimed, c.token, why, log); err != nil {
		// Not failed: release, so a retry (or the stuck-claim job) refuses it again.
		return s.giveUpOrRelease(ctx, c, errors.Join(cause, err), log)
	}
	return apperr.Final(cause)
}

// failure is why an order is failed: its event's reason and the admin's message.
type failure struct{ reason, message string }

func exhausted(o *model.Order) failure {
	return failure{reason: "attempts exhausted",
		message: fmt.Sprintf("order %s gave up after %d attempts; retry or refund it from the admin API", o.OrderNo, o.Attempts)}
}

// fail moves an order to failed and records the admin notification, in one
// transaction.
func (s *Service) fail(ctx context.Context, o *model.Order, from model.OrderStatus, token string, why failure, log *zap.Logger) error {
	now := s.clock.Now()
	var moved bool
	err := s.store.InTx(ctx, func(tx *model.Store) (err error) {
		moved, err = tx.MoveOrder(ctx, o.ID, o.OrderNo, model.OrderMove{
			From: from, To: model.OrderFailed, Reason: why.reason, At: now, Token: token,
		})
		if err != nil || !moved {
			return err
		}
		return s.notifyAdmin(ctx, tx, fmt.Sprintf("order-failed:%s:%d", o.OrderNo, o.ActivateGen), "order_failed",
			"Order "+o.OrderNo+" failed to activate", why.message)
	})
	if err != nil {
		return fmt.Errorf("fail order %s: %w", o.OrderNo, err)
	}
	if moved {
		log.Error("order failed", zap.String("reason", why.reason), zap.Int("attempts", o.Attempts))
	}
	return nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
