package refund

import (
	"context"
	"fmt"
	"strings"
	"time"

	"orderflow/internal/domain/trail"
	"orderflow/internal/infra/pay"
	"orderflow/model"

	"go.uber.org/zap"
)

// Callback applies the simulator's refund notification.
func (s *Service) Callback(ctx context.Context, refundNo, status string) error {
	return s.CallbackFrom(ctx, pay.NamePaysim, refundNo, status)
}

// CallbackFrom applies a provider's verified refund notification; a refund
// number that provider was never asked to refund is not found.
func (s *Service) CallbackFrom(ctx context.Context, provider, refundNo, status string) error {
	r, err := s.load(ctx, refundNo)
	if err != nil {
		return err
	}
	if r.Provider != provider && (r.Provider != "" || provider != pay.NamePaysim) {
		return ErrNotFound
	}
	log := s.log.With(zap.String("refund_no", r.RefundNo), zap.String("order_no", r.OrderNo))
	switch status {
	case pay.RefundSucceeded:
		if r.Status == model.RefundSucceeded {
			return nil
		}
		return s.complete(ctx, r, r.Status, "provider callback", nil, log)
	case pay.RefundFailed:
		if r.Status != model.RefundProcessing {
			return nil
		}
		return s.toManual(ctx, r, "provider declared the refund failed", pay.RefundFailed, log)
	case pay.RefundProcessing:
		return nil
	}
	return ErrBadStatus
}

// Retry is an operator's retry of a refund in manual. Only when the
// provider declared it failed does it get a new refund_no generation: any
// other manual refund may still be known to the provider under its number.
func (s *Service) Retry(ctx context.Context, refundNo string) (string, error) {
	r, err := s.loadManual(ctx, refundNo)
	if err != nil {
		return "", err
	}
	if r.Provider == pay.NameManual {
		// A retry would only come straight back to manual: nothing can send it.
		return "", ErrManualMoney
	}
	now := s.clock.Now()
	noGen, no := r.NoGen, r.RefundNo
	if r.ProviderStatus == pay.RefundFailed {
		noGen++
		no = numberGen(r.BaseNo, noGen)
	}
	gen := r.TaskGen + 1
	why := "operator retry"
	if no != r.RefundNo { // the history, kept under the base number, shows the new one
		why += " as " + no
	}
	moved, err := s.store.MoveAndQueue(ctx, executeRow(no, gen, now),
		trail.Recorded(ctx, now, trail.RefundRetry, r.RefundNo, trail.Detail{
			"from": model.RefundManual.String(), "to": model.RefundProcessing.String(),
			"order_no": r.OrderNo, "amount_cents": r.AmountCents, "refund_no": no,
		}, func(tx *model.Store) (bool, error) {
			return tx.MoveRefund(ctx, r, model.RefundMove{
				From: model.RefundManual, To: model.RefundProcessing, Reason: why, At: now, NextTaskGen: gen,
				Set: map[string]any{"attempts": 0, "provider_status": "", "last_error": "", "refund_no": no, "no_gen": noGen},
			})
		}))
	if err != nil {
		return "", fmt.Errorf("retry refund %s: %w", refundNo, err)
	}
	if !moved {
		return "", ErrNotManual
	}
	s.log.Info("refund retried by operator", zap.String("refund_no", no), zap.String("order_no", r.OrderNo))
	return no, nil
}

// maxNote bounds an operator's note so that "operator resolved: " and the
// note fit the history's reason column.
const maxNote = 64 - len("operator resolved: ")

// Resolve records that an operator returned the money by hand; a note,
// when given, goes into the history with the move.
func (s *Service) Resolve(ctx context.Context, refundNo, note string) error {
	r, err := s.loadManual(ctx, refundNo)
	if err != nil {
		return err
	}
	why, detail := "operator resolved", trail.Detail{}
	if note = strings.TrimSpace(note); note != "" {
		detail["reason"] = note
		if n := []rune(note); len(n) > maxNote { // events.reason is VARCHAR(64)
			note = string(n[:maxNote-1]) + "…"
		}
		why += ": " + note
	}
	return s.complete(ctx, r, model.RefundManual, why, detail, s.log.With(zap.String("refund_no", r.RefundNo), zap.String("order_no", r.OrderNo)))
}

// List pages refunds for operators.
func (s *Service) List(ctx context.Context, status model.RefundStatus, limit int) ([]model.Refund, error) {
	out, err := s.store.ListRefunds(ctx, status, limit)
	if err != nil {
		return nil, fmt.Errorf("list refunds: %w", err)
	}
	return out, nil
}

// RequeueExecute gives a processing refund whose task is not live (Redis
// lost it, or asynq spent its budget) a new task generation through the
// outbox; false means it had moved on. The row is sent after the commit.
func (s *Service) RequeueExecute(ctx context.Context, r *model.Refund) (bool, error) {
	now, gen := s.clock.Now(), r.TaskGen+1
	ok, err := s.store.MoveAndQueue(ctx, executeRow(r.RefundNo, gen, now), func(tx *model.Store) (bool, error) {
		return tx.RequeueRefund(ctx, r.ID, gen, now)
	})
	if err != nil {
		return false, fmt.Errorf("requeue refund %s of order %s: %w", r.RefundNo, r.OrderNo, err)
	}
	if ok {
		s.log.Debug("processing refund had no live task; re-queued", zap.String("refund_no", r.RefundNo), zap.String("order_no", r.OrderNo))
	}
	return ok, nil
}

// alertPage bounds one read of AlertStale's walk.
const alertPage = 500

// AlertStale tells the admin about refunds processing for longer than the
// alert threshold, once per refund and day, paging to the end.
func (s *Service) AlertStale(ctx context.Context) (int, error) {
	now := s.clock.Now()
	n := 0
	var after int64
	for {
		old, err := s.store.RefundsCreatedPage(ctx, model.RefundProcessing, now.Add(-s.set.AlertAfter), after, alertPage)
		if err != nil {
			return n, fmt.Errorf("stale refunds: %w", err)
		}
		for _, r := range old {
			err := s.store.InsertNotification(ctx, &model.Notification{
				NotifyID: fmt.Sprintf("refund-stale:%s:%s", r.RefundNo, now.Format("2006-01-02")), Kind: "refund_stale",
				Subject: "Refund " + r.RefundNo + " still processing", Recipient: "admin", CreatedAt: now,
				Message: fmt.Sprintf("refund %s of order %s has been processing since %s", r.RefundNo, r.OrderNo, r.CreatedAt.Format(time.RFC3339)),
			})
			if err != nil {
				return n, fmt.Errorf("alert stale refund %s of order %s: %w", r.RefundNo, r.OrderNo, err)
			}
			n++
		}
		if len(old) < alertPage {
			return n, nil
		}
		after = old[len(old)-1].ID
	}
}

// Get loads one refund by its number (a retry's number too).
func (s *Service) Get(ctx context.Context, refundNo string) (*model.Refund, error) {
	return s.load(ctx, refundNo)
}

// History is a refund's moves, oldest first. Every retry of a refund keeps
// its events under the base number, so this is the whole story.
func (s *Service) History(ctx context.Context, r *model.Refund) ([]model.Event, error) {
	evs, err := s.store.EventsFor(ctx, "refund", r.BaseNo)
	if err != nil {
		return nil, fmt.Errorf("refund %s history: %w", r.RefundNo, err)
	}
	return evs, nil
}
