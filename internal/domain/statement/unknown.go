package statement

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"orderflow/internal/domain/bounds"
	"orderflow/internal/domain/order"
	"orderflow/internal/infra/pay"
	"orderflow/model"

	"go.uber.org/zap"
)

// unknownPayment is money the provider took that the ledger never
// recorded: listed first (so a crash leaves the break, and the next try
// feeds it again), then fed to the one payment path with the provider's
// trade number — delivered if the order can still be, refunded otherwise —
// and resolved once the ledger holds it.
func (m *matcher) unknownPayment(ctx context.Context, l pay.StatementLine) error {
	b := m.newBreak(BreakUnknownPayment, l.TradeNo, l, nil, "fed to the payment path")
	if err := m.list(ctx, b); err != nil {
		return err
	}
	log := m.log.With(zap.String("order_no", l.OrderNo), zap.String("trade_no", l.TradeNo), zap.Int64("amount_cents", l.AmountCents))
	if l.OrderNo == "" || len(l.TradeNo) > 64 || bounds.CheckAmount(l.AmountCents, 1) != nil {
		log.Warn("unknown payment on the statement cannot be applied: no order number or an amount out of bounds")
		return m.setAction(ctx, b, "not applied: the line names no order or its amount is out of bounds; return the money at the provider")
	}
	res, err := m.s.orders.Pay(ctx, order.Payment{Provider: m.run.Provider, OrderNo: l.OrderNo, TradeNo: l.TradeNo,
		AmountCents: l.AmountCents, At: l.At})
	if errors.Is(err, order.ErrNotFound) {
		log.Warn("unknown payment on the statement names no order of ours")
		return m.setAction(ctx, b, "not applied: no order "+l.OrderNo+"; return the money at the provider")
	}
	if err != nil {
		return fmt.Errorf("apply unknown payment %s: %w", l.TradeNo, err)
	}
	log.Warn("unknown payment on the statement applied", zap.Stringer("disposition", res.Disposition))
	p, err := m.s.store.PaymentByTrade(ctx, m.run.Provider, l.TradeNo)
	if err != nil {
		return fmt.Errorf("unknown payment %s after applying: %w", l.TradeNo, err)
	}
	if err := m.s.store.MarkStated(ctx, model.StatedPayments, []int64{p.ID}, m.run.Day); err != nil {
		return err
	}
	return m.resolve(ctx, b, payAction(res.Disposition))
}

// payAction says what the payment path did with an unknown payment.
func payAction(disposition model.Disposition) string {
	switch disposition {
	case model.PaymentApplied:
		return "applied: the order is paid and is being delivered"
	case model.PaymentLate:
		return "refunded: the order had closed; the payment is refunded through the provider"
	case model.PaymentHeld:
		return "held: its trade already pays another order; an operator decides"
	}
	return "refunded: the payment is refunded through the provider (" + disposition.String() + ")"
}

// theirRefunds matches refunds made outside orderflow (no orderflow refund
// number) by the provider's id: one seen before was recorded then; a new
// one is recorded against its payment, counted in the order's refunds, and
// listed as a break in the same transaction.
func (m *matcher) theirRefunds(ctx context.Context, lines []pay.StatementLine) error {
	known, err := m.s.store.RefundsByProviderRefs(ctx, m.run.Provider, keys(lines, func(l pay.StatementLine) string { return l.Ref }))
	if err != nil {
		return fmt.Errorf("provider refunds of page: %w", err)
	}
	byRef := byKey(known, func(r *model.Refund) string { return *r.ProviderRef })
	var stated []int64
	for _, l := range lines {
		if r, ok := byRef[l.Ref]; ok {
			stated = append(stated, r.ID)
			continue
		}
		if err := m.recordTheirRefund(ctx, l); err != nil {
			return err
		}
	}
	return m.s.store.MarkStated(ctx, model.StatedRefunds, stated, m.run.Day)
}

// errPastPayment rolls back a provider refund that would take its order's
// refunds past its payment.
var errPastPayment = errors.New("past the payment")

// recordTheirRefund records one refund made at the provider.
func (m *matcher) recordTheirRefund(ctx context.Context, l pay.StatementLine) error {
	p, err := m.s.store.PaymentByTrade(ctx, m.run.Provider, l.TradeNo)
	if errors.Is(err, model.ErrNotFound) {
		return m.list(ctx, m.newBreak(BreakUnknownRefund, l.Ref, l, nil, "not recorded: the ledger holds no payment of trade "+l.TradeNo))
	}
	if err != nil {
		return fmt.Errorf("payment of provider refund %s: %w", l.Ref, err)
	}
	o, err := m.s.store.OrderByID(ctx, p.OrderID)
	if err != nil {
		return fmt.Errorf("order of provider refund %s: %w", l.Ref, err)
	}
	l.OrderNo = o.OrderNo
	if p.Disposition != model.PaymentApplied {
		return m.list(ctx, m.newBreak(BreakUnknownRefund, l.Ref, l, nil,
			"not recorded: trade "+l.TradeNo+" is not the order's payment (it is refunded as "+p.Disposition.String()+"); check it at the provider"))
	}
	now := m.s.clock.Now()
	at := now
	if !l.At.IsZero() {
		at = l.At.UTC().Truncate(time.Millisecond)
	}
	no, ref := providerRefundNo(m.run.Provider, l.Ref), l.Ref
	var statedOn *string // learned from an event (no run): no statement listed it yet
	seen := "in the provider's refund notification"
	if m.run.ID != 0 {
		statedOn, seen = &m.run.Day, "on the provider's statement of "+m.run.Day
	}
	r := &model.Refund{RefundNo: no, BaseNo: no, OrderID: o.ID, OrderNo: o.OrderNo, Provider: m.run.Provider, TradeNo: l.TradeNo,
		AmountCents: l.AmountCents, TradeCents: p.AmountCents, Reason: model.RefundReasonProvider, Note: "made at the provider: " + l.Ref,
		ProviderStatus: pay.RefundSucceeded, ProviderRef: &ref, StatedOn: statedOn, CreatedAt: now, UpdatedAt: now, SucceededAt: &at}
	b := m.newBreak(BreakUnknownRefund, l.Ref, l, nil, "recorded against trade "+l.TradeNo+" of order "+o.OrderNo+
		" as refund "+no+", counted in its refunded_cents")
	b.RefundNo = no
	var fresh bool
	err = m.s.store.InTx(ctx, func(tx *model.Store) (err error) {
		if fresh, err = tx.InsertProviderRefund(ctx, r); err != nil || !fresh {
			return err
		}
		if ok, err := tx.AddRefunded(ctx, o.ID, l.AmountCents); err != nil || !ok {
			return errors.Join(err, errPastPayment)
		}
		// Its history, as every refund's: created, then succeeded (SPEC
		// "Every move is also written to an event history").
		for _, e := range []model.Event{
			{ObjectType: "refund", ObjectNo: no, FromStatus: "-", ToStatus: model.RefundProcessing.String(), Reason: model.RefundReasonProvider, CreatedAt: now},
			{ObjectType: "refund", ObjectNo: no, FromStatus: model.RefundProcessing.String(), ToStatus: model.RefundSucceeded.String(),
				Reason: seen, CreatedAt: now},
		} {
			if err := tx.InsertEventLater(ctx, e); err != nil {
				return err
			}
		}
		return m.listIn(ctx, tx, b)
	})
	if errors.Is(err, errPastPayment) {
		b.RefundNo, b.Action = "", "not recorded: it would take order "+o.OrderNo+"'s refunds past its payment; check it at the provider"
		return m.list(ctx, b)
	}
	if err != nil {
		return fmt.Errorf("record provider refund %s: %w", l.Ref, err)
	}
	if fresh {
		m.log.Warn("refund made at the provider recorded against its payment", zap.String("order_no", o.OrderNo),
			zap.String("trade_no", l.TradeNo), zap.String("ref", l.Ref), zap.Int64("amount_cents", l.AmountCents))
	}
	return nil
}

// providerRefundNo is the ledger's number of a refund made at the provider:
// derived from the provider's id, so a re-run finds the same one.
func providerRefundNo(provider, ref string) string {
	sum := sha256.Sum256([]byte(provider + "\x00" + ref))
	return "RP" + hex.EncodeToString(sum[:12])
}
