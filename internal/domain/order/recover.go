package order

import (
	"context"
	"fmt"
	"time"

	"orderflow/internal/domain/trail"
	"orderflow/model"

	"go.uber.org/zap"
)

// ClaimCutoff is the claimed_at before which a claim is stuck: no
// activation runs that long (the task timeout is shorter).
func (s *Service) ClaimCutoff() time.Time { return s.clock.Now().Add(-s.set.ClaimTimeout) }

// ResetStuckClaim resets a claim older than the claim timeout to paid and
// re-queues it under a new generation, in one transaction; false means the
// order was not (or no longer) a stuck claim. The row is sent after the
// commit.
func (s *Service) ResetStuckClaim(ctx context.Context, o *model.Order) (bool, error) {
	if o.Status != model.OrderClaimed || o.ClaimedAt == nil || !o.ClaimedAt.Before(s.ClaimCutoff()) {
		return false, nil
	}
	ok, err := s.requeue(ctx, o, "stuck claim recovered")
	if ok {
		s.metrics.StuckRecovered()
		s.log.Warn("stuck claim reset to paid and re-queued", zap.String("order_no", o.OrderNo), zap.Timep("claimed_at", o.ClaimedAt))
	}
	return ok, err
}

// RequeueActivation gives a paid order whose activation task is not live
// a new generation and its outbox row; false means it had moved on.
func (s *Service) RequeueActivation(ctx context.Context, o *model.Order) (bool, error) {
	ok, err := s.requeue(ctx, o, "")
	if ok {
		s.log.Debug("paid order had no live task; re-queued", zap.String("order_no", o.OrderNo), zap.Int("gen", o.ActivateGen+1))
	}
	return ok, err
}

// requeue gives the order a new generation and its outbox row, in one
// transaction; a release reason also moves its claim (as read: the token
// is named) back to paid, with that reason in the event.
func (s *Service) requeue(ctx context.Context, o *model.Order, release string) (bool, error) {
	now := s.clock.Now()
	gen := o.ActivateGen + 1
	ok, err := s.store.MoveAndQueue(ctx, activateRow(o.OrderNo, gen, now), func(tx *model.Store) (bool, error) {
		if release != "" {
			return tx.MoveOrder(ctx, o.ID, o.OrderNo, model.OrderMove{
				From: model.OrderClaimed, To: model.OrderPaid, Reason: release, At: now,
				Token: deref(o.ClaimToken), NextGen: gen, Set: map[string]any{"claim_token": nil},
			})
		}
		return tx.RequeueOrder(ctx, o.ID, gen, now)
	})
	if err != nil {
		return false, fmt.Errorf("requeue order %s: %w", o.OrderNo, err)
	}
	return ok, nil
}

// Retry is the operator's retry of a failed order: failed→paid with a fresh
// attempt budget and a new generation, so it never collides with the
// archived task of the run that gave up.
func (s *Service) Retry(ctx context.Context, orderNo string) error {
	o, err := s.loadIn(ctx, orderNo, model.OrderFailed, ErrNotRetryable)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	gen := o.ActivateGen + 1
	moved, err := s.store.MoveAndQueue(ctx, activateRow(o.OrderNo, gen, now),
		trail.Recorded(ctx, now, trail.OrderRetry, o.OrderNo, trail.Detail{"from": model.OrderFailed.String(), "to": model.OrderPaid.String()},
			func(tx *model.Store) (bool, error) {
				return tx.MoveOrder(ctx, o.ID, o.OrderNo, model.OrderMove{
					From: model.OrderFailed, To: model.OrderPaid, Reason: "operator retry", At: now, NextGen: gen,
					Set: map[string]any{"attempts": 0, "claim_token": nil},
				})
			}))
	if err != nil {
		return fmt.Errorf("retry order %s: %w", orderNo, err)
	}
	if !moved {
		return ErrNotRetryable
	}
	s.log.Info("failed order retried by operator", zap.String("order_no", orderNo), zap.Int("gen", gen))
	return nil
}
