package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/tasks"
	"orderflow/model"

	"go.uber.org/zap"
)

// closeQueryGrace is how long past its expiry an order whose providers
// cannot be asked waits before it closes anyway: long enough to ride out a
// provider's short outage, short enough that stock is not held for long. A
// payment that lands after the close is refunded as late.
const closeQueryGrace = 5 * time.Minute

// QueryPayments asks every provider the order's payment was started at
// whether it was paid, and applies a confirmed payment exactly as its
// notification would have been (Pay). It is how a lost notification is
// recovered: before the close, and by the sweep's payment:query tasks. It
// reports how many payments it applied; err joins the questions that failed.
func (s *Service) QueryPayments(ctx context.Context, o *model.Order) (int, error) {
	attempts, err := s.store.PaymentAttemptsFor(ctx, o.ID)
	if err != nil {
		return 0, fmt.Errorf("query payments of %s: %w", o.OrderNo, err)
	}
	n := 0
	var errs []error
	for _, a := range attempts {
		log := s.log.With(zap.String("order_no", o.OrderNo), zap.String("provider", a.Provider))
		p, ok := s.pay.Get(a.Provider)
		if !ok {
			log.Warn("payment started at a provider no longer enabled; not asked")
			continue
		}
		paid, err := p.QueryPayment(ctx, o.OrderNo, a.Ref)
		switch {
		case errors.Is(err, pay.ErrNotFound) || (err == nil && paid == nil):
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("query payment of %s at %s: %w", o.OrderNo, a.Provider, err))
			continue
		case paid.OrderNo != o.OrderNo:
			errs = append(errs, fmt.Errorf("query payment of %s at %s: answer names order %s", o.OrderNo, a.Provider, paid.OrderNo))
			continue
		}
		res, err := s.Pay(ctx, Payment{Provider: a.Provider, OrderNo: o.OrderNo, TradeNo: paid.TradeNo, AmountCents: paid.AmountCents, At: paid.At})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !res.Repeat {
			n++
			log.Warn("payment found by query: its notification was lost", zap.String("trade_no", paid.TradeNo),
				zap.Stringer("disposition", res.Disposition))
		}
	}
	return n, errors.Join(errs...)
}

// RecoverPayment is the payment:query task: a pending order's started
// payments are asked about. An order that moved on needs nothing.
func (s *Service) RecoverPayment(ctx context.Context, orderNo string) error {
	o, err := s.load(ctx, orderNo)
	if err != nil || o.Status != model.OrderPending {
		return err
	}
	_, err = s.QueryPayments(ctx, o)
	return err
}

// queryBeforeClose asks an expired order's providers before the close. It
// returns the order as it now stands (paid, if a payment was found), or an
// error while the providers cannot be asked and the grace has not run out
// (the close task runs again).
func (s *Service) queryBeforeClose(ctx context.Context, o *model.Order, now time.Time) (*model.Order, error) {
	n, err := s.QueryPayments(ctx, o)
	if err != nil {
		if now.Before(o.ExpireAt.Add(closeQueryGrace)) {
			return nil, fmt.Errorf("close %s: ask the providers first: %w", o.OrderNo, err)
		}
		s.log.Warn("providers could not be asked past the grace; closing; a payment that lands later is refunded",
			zap.String("order_no", o.OrderNo), zap.Error(err))
	}
	if n == 0 {
		return o, nil
	}
	return s.load(ctx, o.OrderNo)
}

// PaymentQueryTask is the sweep's payment:query task for an order in the
// sweep slot starting at slot: one per order and slot (a duplicate is refused).
func PaymentQueryTask(orderNo string, slot time.Time) (taskID string, payload []byte) {
	return tasks.ID(tasks.TypePaymentQuery, orderNo, int(slot.Unix())), tasks.Encode(tasks.OrderPayload{OrderNo: orderNo})
}
