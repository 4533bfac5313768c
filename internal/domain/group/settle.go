package group

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/domain/bounds"
	"orderflow/internal/infra/failpoint"
	"orderflow/model"

	"go.uber.org/zap"
)

// errShort is the business failure: a participant cannot pay.
type errShort struct{ users []int64 }

func (e *errShort) Error() string {
	return fmt.Sprintf("participants short of balance: %v", e.users)
}

var errNotDue = errors.New("group deadline not reached yet")

// Settle runs one group:settle task. It accepts OPEN (moves it to CLOSED
// first) and CLOSED (a half-done run resumes at the charge step); FAILED
// only when an operator asked (manual). The charge transaction claims
// CLOSED/FAILED→SETTLED with one UPDATE naming those statuses, so whoever
// wins charges and nobody charges twice. retried/maxRetry are asynq's count.
func (s *Service) Settle(ctx context.Context, groupNo string, manual bool, retried, maxRetry int) error {
	log := s.log.With(zap.String("group_no", groupNo), zap.Int("retried", retried))
	err := s.settle(ctx, groupNo, manual, log)
	var short *errShort
	var bound *bounds.BoundError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &bound):
		// A price no wallet may be charged (a row written by hand): no retry
		// changes it. FAILED now, nobody charged.
		if ferr := s.fail(ctx, groupNo, "out of bounds: "+bound.Error(), log); ferr != nil {
			return errors.Join(err, ferr)
		}
		return apperr.Final(fmt.Errorf("settle %s: %w", groupNo, err))
	case errors.As(err, &short):
		// No retry can fix a balance: FAILED now, and say who.
		if ferr := s.fail(ctx, groupNo, "participants short of balance: "+joinIDs(short.users), log); ferr != nil {
			return errors.Join(err, ferr)
		}
		return apperr.Final(fmt.Errorf("settle %s: %w", groupNo, err))
	case errors.Is(err, errNotDue) || errors.Is(err, ErrNotFound):
		return err
	case retried >= maxRetry:
		// The budget is spent; this was the last attempt.
		if ferr := s.fail(ctx, groupNo, "settlement retries exhausted: "+truncate(err.Error(), 180), log); ferr != nil {
			return errors.Join(err, ferr)
		}
		return apperr.Final(fmt.Errorf("settle %s: %w", groupNo, err))
	}
	log.Warn("settlement attempt failed; retrying with backoff", zap.Error(err))
	return fmt.Errorf("settle %s: %w", groupNo, err)
}

func (s *Service) settle(ctx context.Context, groupNo string, manual bool, log *zap.Logger) error {
	g, err := s.load(ctx, groupNo)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	switch {
	case g.Status == model.GroupOpen && now.Before(g.Deadline):
		return errNotDue
	case g.Status == model.GroupOpen:
		var moved bool
		err := s.store.InTx(ctx, func(tx *model.Store) (err error) {
			moved, err = tx.MoveGroup(ctx, g, model.GroupMove{From: []model.GroupStatus{model.GroupOpen}, To: model.GroupClosed,
				Reason: "deadline passed", At: now, Set: map[string]any{"closed_at": now}})
			return err
		})
		if err != nil {
			return fmt.Errorf("close: %w", err)
		}
		if moved {
			log.Info("group closed at its deadline")
		}
		g.Status = model.GroupClosed
		if err := failpoint.Inject(failpoint.GroupAfterClose, groupNo); err != nil {
			return err
		}
	case g.Status == model.GroupClosed, g.Status == model.GroupFailed && manual:
	default:
		log.Info("group needs no settlement from this task", zap.Stringer("status", g.Status))
		return nil
	}
	return s.charge(ctx, g, manual, log)
}

// charge claims the group and debits everyone in ONE transaction: a crash or
// a lost connection anywhere in it rolls back to CLOSED with no wallet touched.
func (s *Service) charge(ctx context.Context, g *model.Group, manual bool, log *zap.Logger) error {
	from := []model.GroupStatus{model.GroupClosed}
	if manual {
		from = append(from, model.GroupFailed)
	}
	if err := bounds.CheckGroupPrice(g.PriceCents); err != nil {
		return err
	}
	now := s.clock.Now()
	var claimed bool
	var charged int64
	err := s.store.InTx(ctx, func(tx *model.Store) (err error) {
		claimed, err = tx.MoveGroup(ctx, g, model.GroupMove{From: from, To: model.GroupSettled, Reason: "charged", At: now,
			Set: map[string]any{"settled_at": now, "failure_reason": ""}})
		if err != nil || !claimed {
			return err
		}
		if err := failpoint.Inject(failpoint.GroupCharge, g.GroupNo); err != nil {
			return err
		}
		short, err := tx.ShortParticipants(ctx, g)
		if err != nil {
			return err
		}
		if len(short) > 0 {
			return &errShort{users: short}
		}
		want, err := tx.CountParticipants(ctx, g.ID)
		if err != nil {
			return err
		}
		if charged, err = tx.ChargeParticipants(ctx, g, now); err != nil {
			return err
		}
		if charged != want {
			// A balance moved between the check and the debit: roll back, retry.
			return fmt.Errorf("charged %d of %d participants; balances changed meanwhile", charged, want)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("charge: %w", err)
	}
	if !claimed {
		log.Info("group already settled or moved by another run; nothing to charge")
		return nil
	}
	log.Info("group settled", zap.Int64("participants_charged", charged))
	return nil
}

func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ",")
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
