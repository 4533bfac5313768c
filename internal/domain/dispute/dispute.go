// Package dispute records card disputes (chargebacks) the payment provider
// reports: one row per dispute, moved only forward, whatever order and how
// often its events arrive. A new dispute tells the shop (order.disputed)
// and the admin (a dispute_opened alert), in the transaction that records
// it; one on an order never delivered, or on a payment already refunded,
// is flagged so. A dispute lost records the money taken back, which the
// ledger audit counts beside the refunds.
package dispute

import (
	"context"
	"errors"
	"fmt"
	"time"

	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/pay"
	"orderflow/model"

	"go.uber.org/zap"
)

// Alert kinds this package writes (notifications.kind).
const (
	// NotifyOpened: a new dispute on a recorded payment.
	NotifyOpened = "dispute_opened"
	// NotifyUnknownTrade: a dispute on a payment the ledger does not
	// have (made outside orderflow on the same account): nothing is
	// recorded, the admin looks at it in the provider's dashboard.
	NotifyUnknownTrade = "dispute_unknown_trade"
)

// Service applies dispute updates.
type Service struct {
	store *model.Store
	clock clock.Clock
	log   *zap.Logger
}

// New builds the service.
func New(store *model.Store, clk clock.Clock, log *zap.Logger) *Service {
	return &Service{store: store, clock: clk, log: log}
}

// ErrUnusable is an update with a field missing or out of bounds: the
// provider is told to send it again (a fixed sender would).
var ErrUnusable = errors.New("dispute update cannot be recorded")

// Apply records what a verified dispute update says, exactly once: the
// first delivery of a dispute inserts it (with its shop webhook and admin
// alert), a later one moves it forward when its status changed, and a
// repeat or an older status changes nothing. nil means recorded or
// deliberately ignored — the provider may stop sending it.
func (s *Service) Apply(ctx context.Context, provider string, u *pay.DisputeUpdate) error {
	log := s.log.With(zap.String("provider", provider), zap.String("dispute_id", u.ID), zap.String("trade_no", u.TradeNo),
		zap.String("dispute_status", u.Status))
	if u.ID == "" || len(u.ID) > 64 || u.TradeNo == "" || len(u.TradeNo) > 64 || u.AmountCents < 0 {
		log.Warn("dispute update unusable", zap.Int64("amount_cents", u.AmountCents))
		return fmt.Errorf("dispute %s: %w", u.ID, ErrUnusable)
	}
	status, ok := model.DisputeMachine.Parse(u.Status)
	if !ok {
		// A status this version does not know: recording it would break
		// the table; acknowledging it keeps the provider from retrying
		// for days. The next event in a known status is applied.
		log.Warn("dispute update in an unknown status; ignored")
		return nil
	}
	pm, err := s.store.PaymentByTrade(ctx, provider, u.TradeNo)
	if errors.Is(err, model.ErrNotFound) {
		return s.unknownTrade(ctx, provider, u, log)
	}
	if err != nil {
		return fmt.Errorf("dispute %s: load payment %s: %w", u.ID, u.TradeNo, err)
	}
	o, err := s.store.OrderByID(ctx, pm.OrderID)
	if err != nil {
		return fmt.Errorf("dispute %s: load order of trade %s: %w", u.ID, u.TradeNo, err)
	}
	log = log.With(zap.String("order_no", o.OrderNo))
	flag, err := s.flag(ctx, o, provider, u.TradeNo)
	if err != nil {
		return fmt.Errorf("dispute %s on order %s: %w", u.ID, o.OrderNo, err)
	}
	now := s.clock.Now()
	d := &model.Dispute{
		DisputeID: u.ID, Provider: provider, TradeNo: u.TradeNo, OrderID: o.ID, OrderNo: o.OrderNo,
		Status: status, Reason: truncate(u.Reason, 64), AmountCents: u.AmountCents, Flag: flag,
		EvidenceDueBy: timeOrNil(u.EvidenceDueBy), CreatedAt: now, UpdatedAt: now,
	}
	var opened, moved bool
	var from model.DisputeStatus
	err = s.store.InTx(ctx, func(tx *model.Store) (err error) {
		opened, moved = false, false
		if opened, err = tx.InsertDispute(ctx, d); err != nil {
			return err
		}
		if opened {
			return tx.InsertNotification(ctx, openedAlert(d, now))
		}
		cur, err := tx.DisputeByID(ctx, u.ID)
		if err != nil {
			return err
		}
		from = cur.Status
		if cur.Status == status || !model.DisputeMachine.Can(cur.Status, status) {
			return nil // a repeat, or an older event arriving late
		}
		moved, err = tx.MoveDispute(ctx, cur, model.DisputeMove{
			From: cur.Status, To: status, Reason: d.Reason, EvidenceDueBy: d.EvidenceDueBy, At: now,
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("dispute %s on order %s: record: %w", u.ID, o.OrderNo, err)
	}
	switch {
	case opened:
		log.Warn("dispute opened; admin alerted", zap.String("flag", flag), zap.Int64("amount_cents", u.AmountCents))
	case moved:
		log.Info("dispute moved", zap.String("from", from.String()))
	default:
		log.Info("dispute update changes nothing (a repeat or an older status)", zap.String("recorded", from.String()))
	}
	return nil
}

// flag says what makes a new dispute suspect: a refund of the trade was
// already asked for (the money may go back twice), or the order never
// finished (nothing was delivered, so there is nothing to defend).
func (s *Service) flag(ctx context.Context, o *model.Order, provider, tradeNo string) (string, error) {
	refunded, err := s.store.TradeHasRefund(ctx, o.ID, provider, tradeNo)
	switch {
	case err != nil:
		return "", fmt.Errorf("refunds of trade %s: %w", tradeNo, err)
	case refunded:
		return model.DisputeFlagAlreadyRefunded, nil
	case o.Status != model.OrderFinished:
		return model.DisputeFlagNotDelivered, nil
	}
	return "", nil
}

// unknownTrade alerts the admin, once per dispute, about a dispute on a
// payment the ledger never recorded, and acknowledges it: no retry by the
// provider would make the payment appear.
func (s *Service) unknownTrade(ctx context.Context, provider string, u *pay.DisputeUpdate, log *zap.Logger) error {
	err := s.store.InsertNotification(ctx, &model.Notification{
		NotifyID: "dispute-unknown:" + u.ID, Kind: NotifyUnknownTrade, Recipient: "admin", CreatedAt: s.clock.Now(),
		Subject: "Dispute " + u.ID + " on a payment orderflow does not know",
		Message: fmt.Sprintf("%s dispute %s (%s, %s, %d cents) names trade %s, which no order of ours was paid by; nothing recorded — see the provider's dashboard",
			provider, u.ID, u.Status, u.Reason, u.AmountCents, u.TradeNo),
	})
	if err != nil {
		return fmt.Errorf("dispute %s: alert unknown trade %s: %w", u.ID, u.TradeNo, err)
	}
	log.Warn("dispute on a trade the ledger does not know; admin alerted, nothing recorded")
	return nil
}

// openedAlert is the admin's alert for a new dispute, its flag spelled out.
func openedAlert(d *model.Dispute, now time.Time) *model.Notification {
	due := "no evidence due date"
	if d.EvidenceDueBy != nil {
		due = "evidence due by " + d.EvidenceDueBy.UTC().Format(time.RFC3339)
	}
	var flag string
	switch d.Flag {
	case model.DisputeFlagNotDelivered:
		flag = "; FLAGGED not_delivered: the order was never delivered"
	case model.DisputeFlagAlreadyRefunded:
		flag = "; FLAGGED already_refunded: this payment was refunded already, the money may go back twice"
	}
	return &model.Notification{
		NotifyID: "dispute-opened:" + d.DisputeID, Kind: NotifyOpened, Recipient: "admin", CreatedAt: now,
		Subject: "Dispute " + d.DisputeID + " on order " + d.OrderNo,
		Message: fmt.Sprintf("%s dispute %s on order %s (trade %s): %s, reason %s, %d cents, %s%s",
			d.Provider, d.DisputeID, d.OrderNo, d.TradeNo, d.Status, d.Reason, d.AmountCents, due, flag),
	}
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
