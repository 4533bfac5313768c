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
	now, gen := s.clock.Now(), g.SettleGen+1
	ok, err := s.store.MoveAndQueue(ctx, settleRow(g.GroupNo, gen, true, now, now),
		trail.Recorded(ctx, now, trail.GroupRetry, g.GroupNo, trail.Detail{"status": g.Status.String(), "gen": gen},
			func(tx *model.Store) (bool, error) { return tx.BumpSettleGen(ctx, g.ID, gen, model.GroupFailed) }))
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
	gen := g.SettleGen + 1
	ok, err := s.store.MoveAndQueue(ctx, settleRow(g.GroupNo, gen, false, g.Deadline, s.clock.Now()), func(tx *model.Store) (bool, error) {
		return tx.BumpSettleGen(ctx, g.ID, gen, model.GroupOpen, model.GroupClosed)
	})
	if err != nil {
		return false, fmt.Errorf("requeue group %s: %w", g.GroupNo, err)
	}
	if ok {
		s.log.Debug("group had no live settle task; re-queued", zap.String("group_no", g.GroupNo), zap.Stringer("status", g.Status))
	}
	return ok, nil
}
