package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strconv"

	"orderflow/internal/audit"
	"orderflow/internal/domain/statement"
	"orderflow/internal/paysim"
	"orderflow/model"
)

// Planting statement breaks: each fake's knobs behind one planter, and the
// differences a day's statement is given before it is reconciled.

// planter makes the planted differences at one provider.
type planter interface {
	StatementDrop(ref string) error
	StatementAlter(ref string, cents int64) error
	DashboardRefund(orderNo string, cents int64) (string, error)
	PayUnseen(orderNo string, cents int64) (string, error)
}

// simPlanter plants at the simulator over its admin routes.
type simPlanter struct {
	ctx context.Context
	c   *paysim.Client
}

func (p simPlanter) StatementDrop(ref string) error { return p.c.StatementDrop(p.ctx, ref) }
func (p simPlanter) StatementAlter(ref string, cents int64) error {
	return p.c.StatementAlter(p.ctx, ref, cents)
}
func (p simPlanter) DashboardRefund(no string, cents int64) (string, error) {
	return p.c.DashboardRefund(p.ctx, no, cents)
}
func (p simPlanter) PayUnseen(no string, cents int64) (string, error) {
	return p.c.PayUnseen(p.ctx, no, cents)
}

// aliPlanter plants at the in-process Alipay fake.
type aliPlanter struct{ a *alipayRig }

func (p aliPlanter) StatementDrop(ref string) error { p.a.fake.StatementDrop(ref); return nil }
func (p aliPlanter) StatementAlter(ref string, cents int64) error {
	p.a.fake.StatementAlter(ref, cents)
	return nil
}
func (p aliPlanter) DashboardRefund(no string, cents int64) (string, error) {
	return p.a.fake.DashboardRefund(no, cents)
}
func (p aliPlanter) PayUnseen(no string, cents int64) (string, error) {
	return p.a.fake.PayUnseen(no, cents)
}

// delivered is a delivered order paid by one trade at a provider.
type delivered struct {
	orderNo, trade string
	cents          int64
}

// plant makes the planted differences at d's provider, seeded, and returns
// the dashboard refund and the trade of the unseen payment of a closed order.
func (w *workload) plant(ctx context.Context, db *sql.DB, p planter, d statementDay, seed int64, st *StatementStats) (*plantedRefund, string, error) {
	rng := rand.New(rand.NewPCG(uint64(seed), 33))
	var ds []delivered
	err := query(ctx, db, func(r *sql.Rows) error {
		var x delivered
		err := r.Scan(&x.orderNo, &x.trade, &x.cents)
		ds = append(ds, x)
		return err
	}, `SELECT o.order_no, p.trade_no, p.amount_cents FROM payments p JOIN orders o ON o.id = p.order_id
		WHERE p.provider = ? AND p.disposition = ? AND o.status = ? AND o.trade_no = p.trade_no AND o.refunded_cents = 0
		AND p.paid_at >= ? AND p.paid_at < ?
		AND NOT EXISTS (SELECT 1 FROM refunds r WHERE r.order_id = o.id)
		AND NOT EXISTS (SELECT 1 FROM payments q WHERE q.order_id = o.id AND q.id <> p.id)
		AND NOT EXISTS (SELECT 1 FROM disputes x WHERE x.order_id = o.id)
		ORDER BY o.id`, d.provider, model.PaymentApplied, model.OrderFinished, d.from, d.to)
	if err != nil {
		return nil, "", fmt.Errorf("delivered orders: %w", err)
	}
	var closed []delivered
	err = query(ctx, db, func(r *sql.Rows) error {
		var x delivered
		err := r.Scan(&x.orderNo, &x.cents)
		closed = append(closed, x)
		return err
	}, `SELECT o.order_no, o.amount_cents FROM orders o WHERE o.status = ? AND o.amount_cents > 0
		AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.order_id = o.id) ORDER BY o.id`, model.OrderClosed)
	if err != nil {
		return nil, "", fmt.Errorf("closed orders: %w", err)
	}
	if len(ds) < 3 || len(closed) < 1 {
		return nil, "", fmt.Errorf("%d delivered orders paid at %s and %d closed unpaid ones: want 3 and 1", len(ds), d.provider, len(closed))
	}
	rng.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })
	rng.Shuffle(len(closed), func(i, j int) { closed[i], closed[j] = closed[j], closed[i] })
	add := func(what, kind string, x delivered, status model.BreakStatus, refundedOnce bool) {
		st.Planted = append(st.Planted, audit.PlantedBreak{What: what, Provider: d.provider, Kind: kind, TradeNo: x.trade, OrderNo: x.orderNo,
			Status: status, RefundedOnce: refundedOnce})
		w.out.Printf("statements: planted at %s: %s (order %s, trade %s, %d cents)", d.provider, what, x.orderNo, x.trade, x.cents)
	}

	drop := ds[0]
	if err := p.StatementDrop(drop.trade); err != nil {
		return nil, "", fmt.Errorf("drop %s: %w", drop.trade, err)
	}
	add("dropped line", statement.BreakMissingPayment, drop, model.BreakOpen, false)

	alter := ds[1]
	altered := alter.cents + 1 + int64(rng.IntN(99))
	if err := p.StatementAlter(alter.trade, altered); err != nil {
		return nil, "", fmt.Errorf("alter %s: %w", alter.trade, err)
	}
	add(fmt.Sprintf("amount altered to %d", altered), statement.BreakAmountMismatch, alter, model.BreakOpen, false)

	refunded := ds[2]
	cents := 1 + int64(rng.IntN(int(refunded.cents)))
	if _, err := p.DashboardRefund(refunded.orderNo, cents); err != nil {
		return nil, "", fmt.Errorf("dashboard refund of %s: %w", refunded.orderNo, err)
	}
	add(fmt.Sprintf("dashboard refund of %d cents", cents), statement.BreakUnknownRefund, refunded, model.BreakOpen, false)
	dash := &plantedRefund{orderNo: refunded.orderNo, cents: cents}

	var late string
	for _, x := range closed[:min(len(closed), 5)] {
		trade, err := p.PayUnseen(x.orderNo, x.cents)
		if err != nil {
			w.out.Printf("statements: unseen payment of closed order %s refused (%v); trying another", x.orderNo, err)
			continue
		}
		x.trade, late = trade, trade
		add("unseen payment of a closed order", statement.BreakUnknownPayment, x, model.BreakResolved, true)
		break
	}
	if late == "" {
		return dash, "", fmt.Errorf("no closed order took an unseen payment")
	}
	foreign := delivered{orderNo: "CHAOS-NOT-OURS-" + strconv.FormatInt(seed, 10), cents: 100 + int64(rng.IntN(900))}
	trade, err := p.PayUnseen(foreign.orderNo, foreign.cents)
	if err != nil {
		return dash, late, fmt.Errorf("unseen payment of no order: %w", err)
	}
	foreign.trade = trade
	add("unseen payment of no order of ours", statement.BreakUnknownPayment, foreign, model.BreakOpen, false)
	return dash, late, nil
}
