package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"time"
)

// After-sales scenarios: money that moves once the order is paid or left,
// by an operator's hand.
const (
	scPartialRefund = "partial-refund"  // delivered, then an operator refunds a part (retried), racing a second refund past the payment
	scManualPay     = "manual-payment"  // an operator confirms a bank transfer (sometimes twice)
	scManualLate    = "manual-too-late" // cancelled, then an operator confirms a transfer: handed back by hand
)

// refundAck is one operator refund the API answered 201.
type refundAck struct {
	orderNo string
	cents   int64
}

// partialRefund pays the order, waits for its delivery, then refunds a
// third of it under one Idempotency-Key (sent again as a client whose answer
// was lost would) while a second operator refunds the rest plus one cent
// under another key: together they exceed the payment, so exactly one of
// them is granted and never more money goes out than came in.
func (w *workload) partialRefund(ctx context.Context, rng *rand.Rand, orderNo string, amount int64, pay func() error) error {
	if err := pay(); err != nil {
		return err
	}
	if !w.waitStatus(ctx, orderNo, "finished", 60*time.Second) {
		return nil // not delivered in time (failed, say): nothing to refund here
	}
	part := max(amount/3, 1)
	keyA, keyB := "chaos-rf-"+randHex(8), "chaos-rf-"+randHex(8)
	return both(
		func() error { return w.operatorRefund(ctx, orderNo, keyA, part, 1+rng.IntN(3)) },
		func() error { return w.operatorRefund(ctx, orderNo, keyB, amount-part+1, 1) })
}

// operatorRefund asks for one refund under key, times times in a row (each
// a retry of the same request), retrying transient failures; 201 is
// recorded once per key, 409 refund_exceeds_payment is a right answer.
func (w *workload) operatorRefund(ctx context.Context, orderNo, key string, cents int64, times int) error {
	body := map[string]any{"amount_cents": cents, "reason": "chaos: a key did not work"}
	for range times {
		err := retry(ctx, 40*time.Second, func() (bool, error) {
			a, err := w.http.do(ctx, "POST", w.c.apiURLs[0]+"/api/v1/admin/orders/"+orderNo+"/refunds", w.c.adminToken, body, "Idempotency-Key", key)
			if a.transient(err) {
				return false, fmt.Errorf("refund: %d %v", a.status, err)
			}
			switch {
			case a.status == 201:
				w.hist.mu.Lock()
				w.hist.refunds[key] = refundAck{orderNo, cents}
				w.hist.mu.Unlock()
				w.countOperator("partial refund granted")
				return true, nil
			case a.status == 409 && containsCode(a.body, "refund_exceeds_payment"):
				w.countOperator("partial refund refused: exceeds payment")
				return true, nil
			}
			return false, finalf("refund: %d %s", a.status, a.body)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// manualPayment confirms a transfer for the order by hand (twice, now and
// then, as two operators who saw the same transfer would).
func (w *workload) manualPayment(ctx context.Context, rng *rand.Rand, orderNo string, amount int64) error {
	ref := fmt.Sprintf("MP%d-%d", w.seed, w.tradeSeq.Add(1))
	body := map[string]any{"reference": ref, "amount_cents": amount, "note": "chaos: bank transfer"}
	for range 1 + rng.IntN(2) {
		err := retry(ctx, 40*time.Second, func() (bool, error) {
			a, err := w.http.do(ctx, "POST", w.c.apiURLs[0]+"/api/v1/admin/orders/"+orderNo+"/payments", w.c.adminToken, body)
			if a.transient(err) {
				return false, fmt.Errorf("manual pay: %d %v", a.status, err)
			}
			if a.status != 200 {
				return false, finalf("manual pay: %d %s", a.status, a.body)
			}
			w.hist.mu.Lock()
			w.hist.payments[ref] = orderNo
			w.hist.mu.Unlock()
			w.countOperator("manual payment confirmed")
			return true, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// waitStatus polls the admin view until the order has status want.
func (w *workload) waitStatus(ctx context.Context, orderNo, want string, budget time.Duration) bool {
	deadline := time.Now().Add(budget)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		var o struct {
			Status string `json:"status"`
		}
		a, err := w.http.do(ctx, "GET", w.c.apiURLs[0]+"/api/v1/admin/orders/"+orderNo, w.c.adminToken, nil)
		if err == nil && a.status == 200 && decodeInto(a, &o) == nil {
			if o.Status == want {
				return true
			}
			if o.Status == "failed" || o.Status == "closed" || o.Status == "refunded" {
				return false
			}
		}
		sleep(ctx, 250*time.Millisecond)
	}
	return false
}

// refundsOverPaid lists broken promises about operator refunds: a granted
// refund (201) the ledger does not hold, or an order whose refunds add up to
// more than it was paid.
func refundsOverPaid(ctx context.Context, db *sql.DB, h *history) ([]string, error) {
	held := map[string]int64{} // order_no → refunds of its own payment
	paid := map[string]int64{}
	err := query(ctx, db, func(rows *sql.Rows) error {
		var no string
		var amount, refunded int64
		if err := rows.Scan(&no, &amount, &refunded); err != nil {
			return err
		}
		held[no], paid[no] = refunded, amount
		return nil
	}, `SELECT order_no, amount_cents, refunded_cents FROM orders WHERE refunded_cents > 0`)
	if err != nil {
		return nil, err
	}
	var out []string
	for no, r := range held {
		if r > paid[no] {
			out = append(out, fmt.Sprintf("order %s: %d cents refunded of %d paid", no, r, paid[no]))
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	acked := map[string]int64{}
	for _, r := range h.refunds {
		acked[r.orderNo] += r.cents
	}
	for no, cents := range acked {
		if held[no] < cents {
			out = append(out, fmt.Sprintf("order %s: %d cents of refunds granted (201), the ledger holds %d", no, cents, held[no]))
		}
	}
	return out, nil
}
