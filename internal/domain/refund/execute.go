package refund

import (
	"context"
	"errors"
	"fmt"
	"time"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/domain/trail"
	"orderflow/internal/infra/failpoint"
	"orderflow/internal/infra/pay"
	"orderflow/model"

	"go.uber.org/zap"
)

// Execute runs one refund:execute task. While the provider may already hold
// the refund (a call timed out, or it said processing) it asks before it
// sends; the provider dedups a resend under the same number anyway. Only
// sends count toward the attempt budget: a failed question just waits for
// the next try (asynq's budget, then reconciliation, bound it).
func (s *Service) Execute(ctx context.Context, refundNo string, gen int) error {
	r, err := s.load(ctx, refundNo)
	if err != nil {
		return fmt.Errorf("refund %s: %w", refundNo, err) // gone: final; the ledger down: retried
	}
	log := s.log.With(zap.String("refund_no", r.RefundNo), zap.String("order_no", r.OrderNo))
	if r.Status != model.RefundProcessing || gen < r.TaskGen {
		log.Info("refund needs nothing from this task; skipping", zap.Stringer("status", r.Status), zap.Int("gen", gen))
		return nil
	}
	if r.Provider == pay.NameManual {
		return s.toManualSet(ctx, r, manualMoney, map[string]any{"provider_status": "", "last_error": manualMoney}, log)
	}
	p, err := s.provider(r)
	if err != nil {
		return err
	}
	total := r.TradeCents
	if total == 0 { // a whole trade's refund
		total = r.AmountCents
	}
	req := pay.RefundRequest{RefundNo: r.RefundNo, OrderNo: r.OrderNo, TradeNo: r.TradeNo, AmountCents: r.AmountCents, TotalCents: total}
	if r.ProviderStatus == pay.RefundProcessing {
		// Active query: the provider accepted it; ask until final. Not an attempt.
		st, err := p.QueryRefund(ctx, req)
		if err != nil {
			return fmt.Errorf("refund %s: query: %w", r.RefundNo, notFoundWhileProcessing(err))
		}
		return s.apply(ctx, r, st, log)
	}
	if r.Attempts > 0 {
		// An earlier send's outcome is unknown: ask before sending again. A
		// failed question is not a failed refund attempt: it only delays.
		st, err := p.QueryRefund(ctx, req)
		switch {
		case err == nil:
			return s.apply(ctx, r, st, log)
		case !errors.Is(err, pay.ErrNotFound):
			return fmt.Errorf("refund %s: query before resend: %w", r.RefundNo, err)
		}
	}
	attempts, err := s.store.CountRefundAttempt(ctx, r.ID, s.clock.Now())
	if err != nil {
		return fmt.Errorf("refund %s: count attempt: %w", r.RefundNo, err)
	}
	st, err := p.Refund(ctx, req)
	s.metrics.RefundAttempt(err == nil)
	if err != nil {
		return s.attemptFailed(ctx, r, attempts, err, log)
	}
	return s.apply(ctx, r, st, log)
}

// notFoundWhileProcessing words a provider that forgot a refund it said
// was processing; asked again on the retry schedule.
func notFoundWhileProcessing(err error) error {
	if errors.Is(err, pay.ErrNotFound) {
		return fmt.Errorf("provider does not know a refund it said was processing: %w", err)
	}
	return err
}

// apply acts on a provider status.
func (s *Service) apply(ctx context.Context, r *model.Refund, status string, log *zap.Logger) error {
	switch status {
	case pay.RefundSucceeded:
		return s.complete(ctx, r, r.Status, "provider confirmed", nil, log)
	case pay.RefundFailed:
		return s.toManual(ctx, r, "provider declared the refund failed", pay.RefundFailed, log)
	case pay.RefundProcessing:
		noted, err := s.store.NoteRefundProvider(ctx, s.note(r, status, ""))
		if err != nil {
			return fmt.Errorf("refund %s: note status: %w", r.RefundNo, err)
		}
		if !noted {
			log.Info("refund moved on while the provider was asked; nothing to note")
			return nil
		}
		return errStillPaying
	}
	return fmt.Errorf("refund %s: unknown provider status %q", r.RefundNo, status)
}

// attemptFailed records a failed provider call; past the attempt budget the
// refund goes to manual and the admin is alerted.
func (s *Service) attemptFailed(ctx context.Context, r *model.Refund, attempts int, cause error, log *zap.Logger) error {
	ctx = context.WithoutCancel(ctx)
	noted, err := s.store.NoteRefundProvider(ctx, s.note(r, "", cause.Error()))
	if err != nil {
		log.Warn("could not record refund failure", zap.Error(err))
	} else if !noted {
		log.Info("refund moved on during a failed provider call; nothing to record", zap.Error(cause))
		return nil
	}
	if attempts >= s.set.MaxAttempts {
		if err := s.toManual(ctx, r, fmt.Sprintf("%d provider attempts failed; last: %v", attempts, cause), "", log); err != nil {
			return err
		}
		return apperr.Final(fmt.Errorf("refund %s: %w", r.RefundNo, cause))
	}
	log.Warn("refund attempt failed; retrying on schedule", zap.Int("attempt", attempts), zap.Error(cause))
	return fmt.Errorf("refund %s attempt %d: %w", r.RefundNo, attempts, cause)
}

// note is a provider answer about r, written only while r is still
// processing under the number this run used.
func (s *Service) note(r *model.Refund, providerStatus, lastErr string) model.ProviderNote {
	return model.ProviderNote{ID: r.ID, RefundNo: r.RefundNo, From: model.RefundProcessing,
		Status: providerStatus, LastErr: lastErr, At: s.clock.Now()}
}

// complete moves a refund to succeeded and, when it was the order's last
// unfinished refund, the order refunding→refunded (finishOrderLocked).
func (s *Service) complete(ctx context.Context, r *model.Refund, from model.RefundStatus, why string, resolved trail.Detail, log *zap.Logger) error {
	now := s.clock.Now()
	var moved, orderDone bool
	err := s.store.InTx(context.WithoutCancel(ctx), func(tx *model.Store) (err error) {
		orderDone = false
		if err := tx.LockOrder(ctx, r.OrderID); err != nil {
			return err
		}
		moved, err = tx.MoveRefund(ctx, r, model.RefundMove{
			From: from, To: model.RefundSucceeded, Reason: why, At: now,
			Set: map[string]any{"succeeded_at": now, "provider_status": pay.RefundSucceeded},
		})
		if err != nil || !moved {
			return err
		}
		if resolved != nil {
			resolved["from"], resolved["to"] = from.String(), model.RefundSucceeded.String()
			resolved["order_no"], resolved["amount_cents"] = r.OrderNo, r.AmountCents
			if err := trail.Record(ctx, tx, now, trail.RefundResolve, r.RefundNo, resolved); err != nil {
				return err
			}
		}
		orderDone, err = finishOrderLocked(ctx, tx, r.OrderID, r.OrderNo, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("refund %s: complete: %w", r.RefundNo, err)
	}
	if moved {
		log.Info("refund succeeded", zap.Bool("order_refunded", orderDone))
	}
	return nil
}

// FinishOrder moves a refunding order none of whose refunds is left
// unfinished to refunded, by the same step as a refund's completion: the
// sweep's repair for an order whose last completion did not see itself
// last. false means there was nothing to move.
func (s *Service) FinishOrder(ctx context.Context, o *model.Order) (bool, error) {
	now := s.clock.Now()
	var done bool
	err := s.store.InTx(ctx, func(tx *model.Store) (err error) {
		if err := tx.LockOrder(ctx, o.ID); err != nil {
			return err
		}
		done, err = finishOrderLocked(ctx, tx, o.ID, o.OrderNo, now)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("order %s: finish refunds: %w", o.OrderNo, err)
	}
	if done {
		s.log.Warn("refunding order whose refunds had all succeeded moved to refunded", zap.String("order_no", o.OrderNo))
	}
	return done, nil
}

// finishOrderLocked moves the order refunding→refunded when none of its
// refunds is left unfinished. The caller holds the order's lock
// (model.LockOrder) for the transaction, so of two refunds finishing
// together the later one counts the earlier one succeeded.
func finishOrderLocked(ctx context.Context, tx *model.Store, orderID int64, orderNo string, now time.Time) (bool, error) {
	left, err := tx.UnfinishedRefunds(ctx, orderID)
	if err != nil {
		return false, err
	}
	if err := failpoint.Inject(failpoint.RefundsCounted, orderNo); err != nil || left > 0 {
		return false, err
	}
	o, err := tx.OrderByID(ctx, orderID)
	if err != nil || o.Status != model.OrderRefunding {
		return false, err
	}
	return tx.MoveOrder(ctx, o.ID, o.OrderNo, model.OrderMove{
		From: model.OrderRefunding, To: model.OrderRefunded, Reason: "all refunds succeeded", At: now,
	})
}

// manualMoney is why the refund of a manual payment (pay.NameManual) goes
// to an operator on its first run: no provider took the money, so none can
// return it, and nothing is sent anywhere.
const manualMoney = "manual payment: return the money by hand, then resolve"

// toManual hands a refund to an operator and alerts the admin, in one transaction.
func (s *Service) toManual(ctx context.Context, r *model.Refund, why, providerStatus string, log *zap.Logger) error {
	return s.toManualSet(ctx, r, why, map[string]any{"provider_status": providerStatus}, log)
}

// toManualSet is toManual writing the columns set with the move.
func (s *Service) toManualSet(ctx context.Context, r *model.Refund, why string, set map[string]any, log *zap.Logger) error {
	now := s.clock.Now()
	var moved bool
	err := s.store.InTx(context.WithoutCancel(ctx), func(tx *model.Store) (err error) {
		moved, err = tx.MoveRefund(ctx, r, model.RefundMove{
			From: model.RefundProcessing, To: model.RefundManual, Reason: truncate(why, 64), At: now, Set: set,
		})
		if err != nil || !moved {
			return err
		}
		return tx.InsertNotification(ctx, &model.Notification{
			NotifyID: fmt.Sprintf("refund-manual:%s:%d", r.RefundNo, r.NoGen), Kind: "refund_manual",
			Subject:   "Refund " + r.RefundNo + " needs a hand",
			Recipient: "admin", CreatedAt: now,
			Message: fmt.Sprintf("refund %s of order %s (trade %s, %d cents) is in manual: %s; retry or resolve it from the admin API",
				r.RefundNo, r.OrderNo, r.TradeNo, r.AmountCents, why),
		})
	})
	if err != nil {
		return fmt.Errorf("refund %s: to manual: %w", r.RefundNo, err)
	}
	if moved {
		log.Error("refund moved to manual; admin alerted", zap.String("why", why))
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
