package webhook

import (
	"context"
	"errors"
	"fmt"
	"time"

	"orderflow/internal/infra/failpoint"
	"orderflow/model"

	"go.uber.org/zap"
)

// leaseMargin is how much longer than one post a delivery's lease lasts.
const leaseMargin = 30 * time.Second

// Deliver posts one webhook once: it leases the row (so two workers never
// post it at once), posts the stored body signed now, and records the
// outcome. A failure is recorded with when the next try is due (retryIn,
// the task's own retry schedule) and returned, so the task retries; a
// webhook already delivered is done. With webhooks off it does nothing:
// the rows wait, visible to the operator.
func (s *Service) Deliver(ctx context.Context, eventID string, retryIn time.Duration) error {
	if !s.On() {
		return nil
	}
	w, err := s.Store.WebhookByEventID(ctx, eventID)
	if w, err = model.Found(w, err, ErrNotFound, "deliver webhook %s", eventID); err != nil || w.DeliveredAt != nil {
		return err
	}
	if err := failpoint.Inject(failpoint.WebhookBeforePost, eventID); err != nil {
		return err
	}
	now := s.Clock.Now()
	leased, err := s.Store.LeaseWebhook(ctx, w.ID, now, now.Add(s.PostTimeout+leaseMargin))
	if err != nil {
		return fmt.Errorf("deliver webhook %s: lease: %w", eventID, err)
	}
	if !leased {
		return fmt.Errorf("deliver webhook %s: %w", eventID, ErrLeased)
	}
	log := s.Log.With(zap.String("event_id", eventID), zap.String("type", w.Type))
	// The outcome is written even if the task's context ends now: the
	// lease must not outlive a post that is over.
	done := context.WithoutCancel(ctx)
	if postErr := s.post(ctx, w.Body); postErr != nil {
		next := s.Clock.Now().Add(retryIn)
		log.Warn("webhook delivery failed; will retry", zap.Int("attempt", w.Attempts+1), zap.Time("next_attempt_at", next), zap.Error(postErr))
		if err := s.Store.NoteWebhookFailure(done, w.ID, postErr.Error(), next); err != nil {
			return errors.Join(postErr, fmt.Errorf("note webhook failure: %w", err))
		}
		return fmt.Errorf("deliver webhook %s: %w", eventID, postErr)
	}
	if err := s.Store.MarkWebhookDelivered(done, w.ID, s.Clock.Now()); err != nil {
		// Delivered but not recorded: it will be posted again, with the
		// same id — at least once, as promised.
		return fmt.Errorf("deliver webhook %s: mark delivered: %w", eventID, err)
	}
	log.Debug("webhook delivered", zap.Int("attempts", w.Attempts+1))
	return nil
}

// post sends body, signed now, and wants any 2xx.
func (s *Service) post(ctx context.Context, body []byte) error {
	return s.Post(ctx, s.URL, body, map[string]string{
		"User-Agent":    "orderflow-webhooks/1",
		SignatureHeader: Sign(s.Secret, s.Clock.Now(), body),
	})
}
