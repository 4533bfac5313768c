package group

import (
	"context"
	"fmt"
	"strconv"

	"orderflow/model"

	"go.uber.org/zap"
)

// fail moves a CLOSED group to FAILED and records its owner and admin
// notifications in one transaction, on a context that outlives the task's.
// If the database is the thing that is down, the group goes to the Redis
// pending set and FlushExhausted writes it when the database returns.
func (s *Service) fail(ctx context.Context, groupNo, why string, log *zap.Logger) error {
	ctx = context.WithoutCancel(ctx)
	moved, err := s.markFailed(ctx, groupNo, why)
	if err == nil {
		if moved {
			log.Error("group settlement FAILED; owner and admin will be notified", zap.String("why", why))
		}
		return nil
	}
	if rerr := s.rdb.HSet(ctx, ExhaustedKey, groupNo, why).Err(); rerr != nil {
		return fmt.Errorf("fail group %s: ledger: %w; pending set: %w", groupNo, err, rerr)
	}
	log.Error("group settlement FAILED but the ledger is unreachable; kept in the pending set", zap.Error(err))
	return nil
}

// markFailed moves the group to FAILED (through CLOSED when the budget ran
// out before it could even close) with its notifications, and reports
// whether it moved. A group already SETTLED or FAILED needs nothing.
func (s *Service) markFailed(ctx context.Context, groupNo, why string) (bool, error) {
	g, err := s.store.GroupByNo(ctx, groupNo)
	if err != nil {
		return false, err
	}
	if g.Status != model.GroupOpen && g.Status != model.GroupClosed {
		return false, nil
	}
	now := s.clock.Now()
	var moved bool
	err = s.store.InTx(ctx, func(tx *model.Store) (err error) {
		if g.Status == model.GroupOpen {
			closed, err := tx.MoveGroup(ctx, g, model.GroupMove{From: []model.GroupStatus{model.GroupOpen}, To: model.GroupClosed,
				Reason: "closed to fail", At: now, Set: map[string]any{"closed_at": now}})
			if err != nil {
				return err
			}
			if !closed {
				return fmt.Errorf("group %s moved while being failed", groupNo)
			}
			g.Status = model.GroupClosed
		}
		moved, err = tx.MoveGroup(ctx, g, model.GroupMove{From: []model.GroupStatus{model.GroupClosed}, To: model.GroupFailed,
			Reason: truncate(why, 64), At: now, Set: map[string]any{"failure_reason": truncate(why, 255)}})
		if err != nil {
			return err
		}
		if !moved {
			return fmt.Errorf("group %s moved while being failed", groupNo)
		}
		for _, to := range []string{"user:" + strconv.FormatInt(g.OwnerUserID, 10), "admin"} {
			if err := tx.InsertNotification(ctx, &model.Notification{
				NotifyID:  fmt.Sprintf("group-failed:%s:%d:%s", g.GroupNo, g.SettleGen, to),
				Kind:      "group_failed",
				Subject:   "Group-buy " + g.GroupNo + " could not be settled",
				Recipient: to, CreatedAt: now,
				Message: fmt.Sprintf("group-buy %s (%q) failed to settle: %s. No participant was charged. An operator can retry it.",
					g.GroupNo, g.Title, why),
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		// Re-read: if someone else finished it meanwhile, that is fine.
		if cur, rerr := s.store.GroupByNo(ctx, groupNo); rerr == nil && cur.Status != model.GroupOpen && cur.Status != model.GroupClosed {
			return false, nil
		}
	}
	return moved, err
}

// FlushExhausted writes groups from the Redis pending set to the ledger
// (FAILED + notifications) and removes each once written.
func (s *Service) FlushExhausted(ctx context.Context) (int, error) {
	pending, err := s.rdb.HGetAll(ctx, ExhaustedKey).Result()
	if err != nil {
		return 0, fmt.Errorf("read pending set: %w", err)
	}
	n := 0
	for groupNo, why := range pending {
		if _, err := s.markFailed(ctx, groupNo, why); err != nil {
			return n, fmt.Errorf("flush exhausted group %s: %w", groupNo, err)
		}
		if err := s.rdb.HDel(ctx, ExhaustedKey, groupNo).Err(); err != nil {
			return n, err
		}
		n++
		s.log.Info("exhausted settlement written to the ledger", zap.String("group_no", groupNo))
	}
	return n, nil
}
