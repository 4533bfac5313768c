package group

import (
	"context"
	"fmt"

	"orderflow/internal/domain/trail"
	"orderflow/model"

	"go.uber.org/zap"
)

// Retry is the operator's retry of a FAILED group: a new settle generation
// whose task may claim FAILED→SETTLED.
func (s *Service) Retry(ctx context.Context, groupNo string) error {
	g, err := s.load(ctx, groupNo)
	if err != nil {
		return err
	}
	if g.Status != model.GroupFailed {
		return ErrNotFailed
	}
	now := s.clock.Now()
	row := settleRow(g.GroupNo, g.SettleGen+1, true, now, now)
	var ok bool
	err = s.store.InTx(ctx, func(tx *model.Store) (err error) {
		if ok, err = tx.BumpSettleGen(ctx, g.ID, g.SettleGen+1, model.GroupFailed); err != nil || !ok {
			return err
		}
		if err := trail.Record(ctx, tx, now, trail.GroupRetry, g.GroupNo, trail.Detail{"status": g.Status.String(), "gen": g.SettleGen + 1}); err != nil {
			return err
		}
		return tx.InsertOutboxLater(ctx, row)
	})
	if err != nil {
		return fmt.Errorf("retry group %s: %w", groupNo, err)
	}
	if !ok {
		return ErrNotFailed
	}
	s.log.Info("failed group retried by operator", zap.String("group_no", groupNo))
	return nil
}

// RequeueSettle gives an OPEN/CLOSED group with no live settle task (Redis
// lost it, or a worker died on the last attempt and asynq archived it
// without calling us) a new generation with a fresh budget, due at the
// deadline or now if that has passed; false means it had moved on. The row
// is sent after the commit.
func (s *Service) RequeueSettle(ctx context.Context, g *model.Group) (bool, error) {
	now := s.clock.Now()
	row := settleRow(g.GroupNo, g.SettleGen+1, false, g.Deadline, now)
	var ok bool
	err := s.store.InTx(ctx, func(tx *model.Store) (err error) {
		if ok, err = tx.BumpSettleGen(ctx, g.ID, g.SettleGen+1, model.GroupOpen, model.GroupClosed); err != nil || !ok {
			return err
		}
		return tx.InsertOutboxLater(ctx, row)
	})
	if err != nil {
		return false, fmt.Errorf("requeue group %s: %w", g.GroupNo, err)
	}
	if ok {
		s.log.Debug("group had no live settle task; re-queued", zap.String("group_no", g.GroupNo), zap.Stringer("status", g.Status))
	}
	return ok, nil
}
