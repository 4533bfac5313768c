package group

import (
	"context"
	"fmt"
	"time"

	"orderflow/model"
	"orderflow/tasks"

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
		if ok, err = tx.BumpSettleGen(ctx, g.ID, g.SettleGen+1); err != nil || !ok {
			return err
		}
		return tx.InsertOutbox(ctx, row)
	})
	if err != nil {
		return fmt.Errorf("retry group %s: %w", groupNo, err)
	}
	if !ok {
		return ErrNotFailed
	}
	s.relay.Send(ctx, row.TaskID)
	s.log.Info("failed group retried by operator", zap.String("group_no", groupNo))
	return nil
}

// RequeueDue gives OPEN/CLOSED groups with no live settle task (Redis lost
// it, or a worker died on the last attempt and asynq archived it without
// calling us) a new generation with a fresh budget, due at the deadline or
// now if that has passed.
func (s *Service) RequeueDue(ctx context.Context) (int, error) {
	due, err := s.store.GroupsUnsettled(ctx, 500)
	if err != nil {
		return 0, fmt.Errorf("requeue groups: %w", err)
	}
	n := 0
	var sent []string
	for i := range due {
		g := &due[i]
		live, err := s.relay.Live(ctx, tasks.TypeGroupSettle, tasks.ID(tasks.TypeGroupSettle, g.GroupNo, g.SettleGen))
		if err != nil {
			return n, err
		}
		if live {
			continue
		}
		now := s.clock.Now()
		row := settleRow(g.GroupNo, g.SettleGen+1, false, maxTime(g.Deadline, now), now)
		var ok bool
		err = s.store.InTx(ctx, func(tx *model.Store) (err error) {
			if ok, err = tx.BumpSettleGen(ctx, g.ID, g.SettleGen+1); err != nil || !ok {
				return err
			}
			return tx.InsertOutbox(ctx, row)
		})
		if err != nil {
			return n, fmt.Errorf("requeue group %s: %w", g.GroupNo, err)
		}
		if ok {
			n++
			sent = append(sent, row.TaskID)
			s.log.Warn("due group had no live settle task; re-queued", zap.String("group_no", g.GroupNo), zap.String("status", g.Status))
		}
	}
	s.relay.Send(ctx, sent...)
	return n, nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
