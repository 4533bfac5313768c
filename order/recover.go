package order

import (
	"context"
	"fmt"
	"time"

	"orderflow/model"
	"orderflow/tasks"

	"go.uber.org/zap"
)

// Recovered counts what one sweep did.
type Recovered struct {
	StuckClaims int // claimed too long → paid, re-queued
	LostTasks   int // paid with no live task → re-queued
}

const sweepBatch = 500

// RecoverStuck resets claims older than the claim timeout to paid and
// re-queues them under a new generation, and re-queues paid orders whose
// activation task no longer exists in asynq. Safe to run from many
// processes at once: every step is a conditional UPDATE.
func (s *Service) RecoverStuck(ctx context.Context) (Recovered, error) {
	return s.recover(ctx, s.clock.Now().Add(-s.set.ClaimTimeout))
}

// RequeueLost is RecoverStuck for reconciliation: every paid order with no
// live task is re-queued, however recently it was paid (after a Redis wipe
// none of them has one).
func (s *Service) RequeueLost(ctx context.Context) (Recovered, error) {
	return s.recover(ctx, s.clock.Now().Add(time.Millisecond))
}

func (s *Service) recover(ctx context.Context, paidCutoff time.Time) (Recovered, error) {
	var rec Recovered
	cutoff := s.clock.Now().Add(-s.set.ClaimTimeout)
	stuck, err := s.store.OrdersInStatusSince(ctx, model.OrderClaimed, cutoff, sweepBatch)
	if err != nil {
		return rec, fmt.Errorf("recover stuck claims: %w", err)
	}
	var sent []*model.OutboxRow
	for i := range stuck {
		o := &stuck[i]
		if o.ClaimedAt == nil || !o.ClaimedAt.Before(cutoff) {
			continue
		}
		ok, row, err := s.requeue(ctx, o, true)
		if err != nil {
			return rec, err
		}
		if ok {
			rec.StuckClaims++
			s.metrics.StuckRecovered()
			sent = append(sent, row)
			s.log.Warn("stuck claim reset to paid and re-queued", zap.String("order_no", o.OrderNo), zap.Timep("claimed_at", o.ClaimedAt))
		}
	}
	idle, err := s.store.OrdersInStatusSince(ctx, model.OrderPaid, paidCutoff, sweepBatch)
	if err != nil {
		return rec, fmt.Errorf("recover lost tasks: %w", err)
	}
	for i := range idle {
		o := &idle[i]
		live, err := s.relay.Live(ctx, tasks.TypeOrderActivate, tasks.ID(tasks.TypeOrderActivate, o.OrderNo, o.ActivateGen))
		if err != nil {
			return rec, err
		}
		if live {
			continue
		}
		ok, row, err := s.requeue(ctx, o, false)
		if err != nil {
			return rec, err
		}
		if ok {
			rec.LostTasks++
			sent = append(sent, row)
			s.log.Warn("paid order had no live task; re-queued", zap.String("order_no", o.OrderNo), zap.Int("gen", o.ActivateGen+1))
		}
	}
	s.relay.SendRows(ctx, sent...)
	return rec, nil
}

// requeue gives the order a new generation and its outbox row, in one
// transaction; fromClaimed also resets the stuck claim to paid.
func (s *Service) requeue(ctx context.Context, o *model.Order, fromClaimed bool) (bool, *model.OutboxRow, error) {
	now := s.clock.Now()
	gen := o.ActivateGen + 1
	row := activateRow(o.OrderNo, gen, now)
	var ok bool
	err := s.store.InTx(ctx, func(tx *model.Store) (err error) {
		if fromClaimed {
			ok, err = tx.MoveOrder(ctx, o.ID, o.OrderNo, model.OrderMove{
				From: model.OrderClaimed, To: model.OrderPaid, Reason: "stuck claim recovered", At: now,
				Token: deref(o.ClaimToken), NextGen: gen, Set: map[string]any{"claim_token": nil},
			})
		} else {
			ok, err = tx.RequeueOrder(ctx, o.ID, gen, now)
		}
		if err != nil || !ok {
			return err
		}
		return tx.InsertOutbox(ctx, row)
	})
	if err != nil {
		return false, nil, fmt.Errorf("requeue order %s: %w", o.OrderNo, err)
	}
	if ok {
		s.invalidate(ctx, o.ID, o.OrderNo)
	}
	return ok, row, nil
}

// Retry is the operator's retry of a failed order: failed→paid with a fresh
// attempt budget and a new generation, so it never collides with the
// archived task of the run that gave up.
func (s *Service) Retry(ctx context.Context, orderNo string) error {
	o, err := s.load(ctx, orderNo)
	if err != nil {
		return err
	}
	if o.Status != model.OrderFailed {
		return ErrNotRetryable
	}
	now := s.clock.Now()
	gen := o.ActivateGen + 1
	row := activateRow(o.OrderNo, gen, now)
	var moved bool
	err = s.store.InTx(ctx, func(tx *model.Store) (err error) {
		moved, err = tx.MoveOrder(ctx, o.ID, o.OrderNo, model.OrderMove{
			From: model.OrderFailed, To: model.OrderPaid, Reason: "operator retry", At: now, NextGen: gen,
			Set: map[string]any{"attempts": 0, "claim_token": nil},
		})
		if err != nil || !moved {
			return err
		}
		return tx.InsertOutbox(ctx, row)
	})
	if err != nil {
		return fmt.Errorf("retry order %s: %w", orderNo, err)
	}
	if !moved {
		return ErrNotRetryable
	}
	s.invalidate(ctx, o.ID, o.OrderNo)
	s.relay.SendRows(ctx, row)
	s.log.Info("failed order retried by operator", zap.String("order_no", orderNo), zap.Int("gen", gen))
	return nil
}
