// Package webhook is the shop webhooks' use cases: the delivery of one
// event (signed, leased, its outcome recorded), the operator's list and
// retry, and the sweep's re-queue. The events themselves are written by the
// moves that cause them, in the ledger (model/webhooks.go).
package webhook

import (
	"context"
	"errors"
	"fmt"
	"time"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/domain/trail"
	"orderflow/internal/infra/clock"
	"orderflow/model"

	"go.uber.org/zap"
)

// Errors the API maps.
var (
	ErrNotFound  = apperr.New(apperr.NotFound, "webhook_not_found", "no such webhook")
	ErrDelivered = apperr.New(apperr.Conflict, "webhook_delivered", "the webhook was already delivered")
	ErrBadStatus = apperr.New(apperr.Invalid, "invalid_status", "status must be pending, delivered or failing")
)

// Service delivers webhooks and serves the operator.
type Service struct {
	Store  *model.Store
	URL    string // "" = webhooks off
	Secret string
	// Post sends one body and wants a 2xx (internal/infra/post); the
	// domain never holds an HTTP client.
	Post func(ctx context.Context, url string, body []byte, headers map[string]string) error
	// PostTimeout bounds one Post; a delivery's lease outlasts it.
	PostTimeout time.Duration
	Clock       clock.Clock
	Log         *zap.Logger
}

// On reports whether webhooks are configured.
func (s *Service) On() bool { return s.URL != "" }

// View is the operator's view of one webhook.
type View struct {
	ID            string     `json:"id"`
	Type          string     `json:"type"`
	CreatedAt     time.Time  `json:"created_at"`
	Status        string     `json:"status"`
	Attempts      int        `json:"attempts"`
	LastError     string     `json:"last_error"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	DeliveredAt   *time.Time `json:"delivered_at"`
}

func viewOf(w *model.Webhook) View {
	v := View{ID: w.EventID, Type: w.Type, CreatedAt: w.CreatedAt, Status: w.Status(), Attempts: w.Attempts,
		LastError: w.LastError, DeliveredAt: w.DeliveredAt}
	if w.DeliveredAt == nil {
		next := w.NextAttemptAt
		v.NextAttemptAt = &next
	}
	return v
}

// List returns webhooks newest first, of one status ("" for all).
func (s *Service) List(ctx context.Context, status string, limit int) ([]View, error) {
	switch status {
	case "", model.WebhookPending, model.WebhookDelivered, model.WebhookFailing:
	default:
		return nil, ErrBadStatus
	}
	rows, err := s.Store.ListWebhooks(ctx, status, limit)
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	out := make([]View, len(rows))
	for i := range rows {
		out[i] = viewOf(&rows[i])
	}
	return out, nil
}

// Retry is the operator's retry: an undelivered webhook gets a new delivery
// task due now (its id stays the same), whatever its task's state.
func (s *Service) Retry(ctx context.Context, eventID string) (View, error) {
	w, err := s.Store.WebhookByEventID(ctx, eventID)
	if w, err = model.Found(w, err, ErrNotFound, "retry webhook %s", eventID); err != nil {
		return View{}, err
	}
	if w.DeliveredAt != nil {
		return View{}, ErrDelivered
	}
	requeued, err := s.Requeue(ctx, w)
	if err != nil {
		return View{}, err
	}
	if !requeued { // delivered meanwhile, or re-queued by someone else: show what is
		if w, err = s.Store.WebhookByEventID(ctx, eventID); err != nil {
			return View{}, fmt.Errorf("retry webhook %s: %w", eventID, err)
		}
		if w.DeliveredAt != nil {
			return View{}, ErrDelivered
		}
		return viewOf(w), nil
	}
	w.TaskGen++
	w.NextAttemptAt = s.Clock.Now()
	return viewOf(w), nil
}

// Requeue gives an undelivered webhook a new delivery task generation due
// now, the task written in the same transaction and sent after its commit;
// false means it moved on (delivered, or re-queued by someone else).
func (s *Service) Requeue(ctx context.Context, w *model.Webhook) (bool, error) {
	now := s.Clock.Now()
	row := s.Store.WebhookTask(w.EventID, w.TaskGen+1, now)
	if row == nil {
		return false, nil // webhooks are off: nothing delivers them
	}
	ok, err := s.Store.MoveAndQueue(ctx, row, func(tx *model.Store) (bool, error) {
		if ok, err := tx.BumpWebhookGen(ctx, w, now); err != nil || !ok {
			return false, err
		}
		// An operator's retry is audited; the sweep's re-queue (no operator) is not.
		return true, trail.Record(ctx, tx, now, trail.WebhookRetry, w.EventID, trail.Detail{"type": w.Type, "gen": w.TaskGen + 1, "attempts": w.Attempts})
	})
	if err != nil {
		return false, fmt.Errorf("requeue webhook %s: %w", w.EventID, err)
	}
	return ok, nil
}

// ErrLeased is Deliver's answer when another delivery holds the webhook:
// the task retries later and finds it delivered, or the lease expired.
var ErrLeased = errors.New("webhook held by another delivery")
