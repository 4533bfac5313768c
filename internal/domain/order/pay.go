package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"orderflow/internal/domain/refund"
	"orderflow/internal/domain/trail"
	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/tracing"
	"orderflow/model"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
)

// Payment is a provider's payment notification (or the answer to a query
// about a payment whose notification was lost: the same thing).
type Payment struct {
	Provider    string // pay.Name*; empty is the simulator
	OrderNo     string
	TradeNo     string
	AmountCents int64
	At          time.Time // the provider's own time of the payment; zero: the ledger's
	Note        string    // an operator's note on a payment they confirmed (ConfirmManual), for the audit trail
}

// PayResult says what a notification did.
type PayResult struct {
	Disposition model.Disposition // applied, late, duplicate, mismatch, held
	Repeat      bool              // the trade was already recorded (for this order, or held for it)
}

// Pay records a payment. A matching payment for a pending order moves it
// pending→paid and queues its activation in the same transaction (sent, and
// the order's cached view dropped, once it commits); a trade
// already recorded for another order is held for an operator (held.go);
// anything else is recorded for refund and never delivered.
func (s *Service) Pay(ctx context.Context, p Payment) (*PayResult, error) {
	if p.Provider == "" {
		p.Provider = pay.NamePaysim
	}
	ctx, span := s.payInOrderTrace(ctx, p.OrderNo)
	defer span.End()
	now := s.clock.Now()
	var rec recorded
	var err error
	for _, careful := range []bool{false, true} {
		err = s.store.InTx(ctx, func(tx *model.Store) (err error) {
			if rec, err = s.record(ctx, tx, p, now, careful); err != nil || rec.result.Repeat || p.Provider != pay.NameManual {
				return err
			}
			// An operator's confirmation (ConfirmManual) is audited with its
			// effect; a provider's payment is the system's own, whoever's
			// request happened to find it.
			return trail.Record(ctx, tx, now, trail.OrderPayment, p.OrderNo, paymentDetail(p, rec.result))
		})
		// The expected case met a trade already recorded or an order moved
		// meanwhile, or an order this Galera node has not applied yet (the
		// notification can outrun the create's replication): its
		// transaction rolled back; look again, carefully.
		if careful || !(model.IsDuplicate(err) || errors.Is(err, model.ErrUnmet) || s.notYetHere(ctx, err, p.OrderNo)) {
			break
		}
	}
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("pay order %s trade %s: %w", p.OrderNo, p.TradeNo, err)
	}
	log := s.log.With(zap.String("order_no", p.OrderNo), zap.String("provider", p.Provider), zap.String("trade_no", p.TradeNo))
	res := rec.result
	switch {
	case res.Repeat:
		log.Info("payment notification repeated; already recorded")
	case res.Disposition == model.PaymentApplied:
		log.Info("order paid")
	case res.Disposition == model.PaymentHeld:
		log.Warn("payment held for an operator: its trade already pays another order; not delivered, not refunded",
			zap.String("paid_order_no", rec.paidOrderNo), zap.Int64("amount_cents", p.AmountCents))
	default:
		log.Warn("payment recorded for refund, not delivered", zap.Stringer("disposition", res.Disposition))
	}
	return &res, nil
}

// recorded is what one payment's transaction did, for Pay's answer and log.
type recorded struct {
	result      PayResult
	paidOrderNo string // held: the order the trade already pays
}

// notYetHere reports whether err is a not-found that a causal read
// (model.Store.Causal: on Galera, after the node has applied every commit
// the cluster made before it) contradicts. On one server it never is.
func (s *Service) notYetHere(ctx context.Context, err error, orderNo string) bool {
	if !errors.Is(err, ErrNotFound) {
		return false
	}
	_, err = s.store.Causal().OrderByNo(ctx, orderNo)
	return err == nil
}

// record is Pay's transaction. Unless careful, the expected case (pending
// order, right amount) is written without waiting for answers (payExpected).
func (s *Service) record(ctx context.Context, tx *model.Store, p Payment, now time.Time, careful bool) (recorded, error) {
	var rec recorded
	if !careful {
		if o, ok := s.createdHere(p.OrderNo, now); ok && disposition(o, p.AmountCents) == model.PaymentApplied {
			// The expected case for an order this process created: nothing
			// to read first (created.go); its checks decide.
			rec.result.Disposition = model.PaymentApplied
			return rec, s.payExpected(ctx, tx, o, newPayment(p, o, now))
		}
	}
	o, err := tx.OrderByNo(ctx, p.OrderNo)
	if errors.Is(err, model.ErrNotFound) {
		return rec, ErrNotFound
	}
	if err != nil {
		return rec, err
	}
	pay := newPayment(p, o, now)
	if !careful && disposition(o, pay.AmountCents) == model.PaymentApplied {
		rec.result.Disposition = model.PaymentApplied
		return rec, s.payExpected(ctx, tx, o, pay)
	}
	inserted, err := tx.InsertPayment(ctx, pay)
	if err != nil {
		return rec, err
	}
	if !inserted {
		return rec, s.tradeRecorded(ctx, tx, o, pay, &rec)
	}
	rec.result.Disposition, err = s.applyPayment(ctx, tx, o, pay)
	if err != nil || rec.result.Disposition == model.PaymentApplied {
		return rec, err
	}
	if err := tx.SetPaymentDisposition(ctx, p.Provider, p.TradeNo, rec.result.Disposition); err != nil {
		return rec, err
	}
	_, _, err = refund.Open(ctx, tx, o, refund.Request{Provider: pay.Provider, TradeNo: pay.TradeNo, AmountCents: pay.AmountCents, Reason: rec.result.Disposition.String()}, now)
	return rec, err
}

// newPayment is the payment row a notification for order o writes.
func newPayment(p Payment, o *model.Order, now time.Time) *model.Payment {
	paidAt := now
	if !p.At.IsZero() {
		paidAt = p.At.UTC().Truncate(time.Millisecond)
	}
	return &model.Payment{Provider: p.Provider, TradeNo: p.TradeNo, OrderID: o.ID, AmountCents: p.AmountCents,
		Disposition: model.PaymentApplied, CreatedAt: now, PaidAt: paidAt}
}

// applyPayment decides what a newly recorded payment does to its order.
func (s *Service) applyPayment(ctx context.Context, tx *model.Store, o *model.Order, pay *model.Payment) (model.Disposition, error) {
	now := pay.CreatedAt
	d := disposition(o, pay.AmountCents)
	if d == model.PaymentMismatch {
		return d, s.notifyAdmin(ctx, tx, "payment-mismatch:"+pay.TradeNo, "payment_mismatch",
			"Payment amount does not match order "+o.OrderNo,
			fmt.Sprintf("order %s expects %d cents; trade %s paid %d cents; the payment is refunded, nothing delivered",
				o.OrderNo, o.AmountCents, pay.TradeNo, pay.AmountCents))
	}
	if o.Status == model.OrderClosed {
		return s.refundLate(ctx, tx, o, now)
	}
	if d != model.PaymentApplied {
		return d, nil
	}
	gen := o.ActivateGen + 1
	moved, err := tx.MoveOrder(ctx, o.ID, o.OrderNo, paidMove(pay, gen))
	if err != nil {
		return "", err
	}
	if !moved {
		// Someone moved it between our read and our UPDATE (close, or
		// another trade): read the committed truth and classify again.
		cur, err := tx.OrderByID(ctx, o.ID)
		if err != nil {
			return "", err
		}
		if cur.Status == model.OrderClosed {
			return s.refundLate(ctx, tx, cur, now)
		}
		return dispositionFor(cur.Status), nil
	}
	return model.PaymentApplied, s.queueActivation(ctx, tx, o, gen, now)
}

// payExpected is the common case — a new trade for a pending order, the
// amount right — written without waiting for answers: the payment, the move,
// the slot release and the activation's outbox row travel with the COMMIT in
// one round trip after the order's read (on MariaDB). A trade already recorded (duplicate key) or an
// order moved meanwhile (ErrUnmet) fails the transaction, and Pay looks again
// on the careful path.
func (s *Service) payExpected(ctx context.Context, tx *model.Store, o *model.Order, pay *model.Payment) error {
	if err := tx.InsertPaymentLater(ctx, pay); err != nil {
		return err
	}
	gen := o.ActivateGen + 1
	if err := tx.MoveOrderOrAbortLater(ctx, o.ID, o.OrderNo, paidMove(pay, gen)); err != nil {
		return err
	}
	return s.queueActivation(ctx, tx, o, gen, pay.CreatedAt)
}

// paidMove is pending→paid by a payment, entering activation generation gen.
func paidMove(pay *model.Payment, gen int) model.OrderMove {
	return model.OrderMove{
		From: model.OrderPending, To: model.OrderPaid, Reason: "payment", At: pay.CreatedAt, NextGen: gen,
		Set: map[string]any{"trade_no": pay.TradeNo, "paid_at": pay.CreatedAt},
	}
}

// queueActivation follows a payment's move: the buyer's pending slot is free
// again, and the activation's outbox row commits with the move (and is sent
// after the commit).
func (s *Service) queueActivation(ctx context.Context, tx *model.Store, o *model.Order, gen int, now time.Time) error {
	if err := tx.ReleasePendingSlotLater(ctx, o.UserID); err != nil {
		return err
	}
	return tx.InsertOutboxLater(ctx, activateRow(o.OrderNo, gen, now))
}

// refundLate moves a closed order to refunding: the payment came after the
// close, so the money goes back and the order is never delivered.
func (s *Service) refundLate(ctx context.Context, tx *model.Store, o *model.Order, now time.Time) (model.Disposition, error) {
	moved, err := tx.MoveOrder(ctx, o.ID, o.OrderNo, model.OrderMove{
		From: model.OrderClosed, To: model.OrderRefunding, Reason: "payment after close", At: now,
	})
	if err != nil {
		return "", err
	}
	if !moved {
		return model.PaymentDuplicate, nil
	}
	return model.PaymentLate, nil
}

// disposition is what a payment of paidCents does to order o as read, before
// any write: a wrong amount is a mismatch whatever the status; a pending
// order is paid; a closed one is late (refundLate moves it to refunding, or
// finds it already moved: a duplicate). A trade already recorded never gets
// here: tradeRecorded calls it a repeat or holds it.
func disposition(o *model.Order, paidCents int64) model.Disposition {
	switch {
	case paidCents != o.AmountCents:
		return model.PaymentMismatch
	case o.Status == model.OrderPending:
		return model.PaymentApplied
	case o.Status == model.OrderClosed:
		return model.PaymentLate
	}
	return dispositionFor(o.Status)
}

// dispositionFor classifies a matching payment for an order that is not
// pending (and not closed): another trade already paid it, or it is already
// being refunded after a late payment.
func dispositionFor(st model.OrderStatus) model.Disposition {
	if st == model.OrderRefunding || st == model.OrderRefunded {
		return model.PaymentLate
	}
	return model.PaymentDuplicate
}

// payInOrderTrace makes a payment part of its order's trace. The provider's
// notification is a request of its own, a trace of its own; with tracing
// on, the payment's work is an "order.pay" span whose parent is the create
// request's span (recorded on the order row) and which links back to the
// notification's span. The activation it queues then continues the same
// trace: create, pay and activate are one trace per order. Off, or for an
// order created untraced, it is a no-op span.
func (s *Service) payInOrderTrace(ctx context.Context, orderNo string) (context.Context, trace.Span) {
	if !tracing.On() {
		return ctx, noSpan
	}
	link := trace.LinkFromContext(ctx)
	parent := ctx
	if o, err := s.store.OrderByNo(ctx, orderNo); err == nil && o.TraceContext != nil {
		parent = tracing.WithTraceparent(ctx, *o.TraceContext)
	}
	return tracing.Tracer().Start(parent, "order.pay", trace.WithLinks(link),
		trace.WithAttributes(attribute.String("orderflow.order_no", orderNo)))
}

// noSpan is what payInOrderTrace returns with tracing off: End does nothing.
var noSpan = trace.SpanFromContext(context.Background())
