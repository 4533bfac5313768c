package chaos

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"time"

	fake "orderflow/internal/payfake/alipay"
)

// Paying through the Alipay fake: the workload's checkout, its notifications
// (lost, repeated, redelivered) and the Alipay run's figures.

// payAlipay is the buyer paying an order checked out at Alipay: the fake
// marks the trade paid and sends its signed notification (times copies at
// once), again until orderflow answers "success". A lost payment's
// notification is dropped at first; the workload waits, as Alipay's retry
// schedule would, long enough for the sweep's query (or the close's) to
// find it, then sends it again.
func (w *workload) payAlipay(ctx context.Context, orderNo string, times int, lost bool) error {
	a := w.c.ali
	if lost {
		a.lost.Store(orderNo, true)
		if _, err := a.fake.Pay(ctx, orderNo, fake.PayOptions{Times: times}); err != nil {
			a.lost.Delete(orderNo)
			return fmt.Errorf("pay: %v", err)
		}
		w.countAlipay(func(s *AlipayStats) { s.Paid++; s.Lost++; w.aliPaid[orderNo] = true })
		sleep(ctx, lostNotifyRetry)
		a.lost.Delete(orderNo)
		times = 1
	} else {
		w.countAlipay(func(s *AlipayStats) { s.Paid++; w.aliPaid[orderNo] = true })
	}
	return w.notifyAlipay(ctx, orderNo, times)
}

// notifyAlipay has the fake (mark the trade paid and) send its signed
// notification, times copies at once, until orderflow answers "success".
func (w *workload) notifyAlipay(ctx context.Context, orderNo string, times int) error {
	a := w.c.ali
	return retry(ctx, 40*time.Second, func() (bool, error) {
		ans, err := a.fake.Pay(ctx, orderNo, fake.PayOptions{Times: times})
		if err != nil {
			return false, fmt.Errorf("pay: %v", err)
		}
		var codes []string
		for _, x := range ans {
			if x.Err == nil && x.Status == http.StatusOK && x.Body == "success" {
				trade := a.fake.TradeNo(orderNo)
				w.hist.mu.Lock()
				w.hist.payments[trade] = orderNo
				w.hist.mu.Unlock()
				return true, nil
			}
			codes = append(codes, fmt.Sprintf("%d %q", x.Status, x.Body))
		}
		// "fail", a 5xx or no answer: orderflow could not record it yet.
		return false, fmt.Errorf("pay: orderflow answered %v", codes)
	})
}

// lostNotifyRetry is when a lost notification is sent again: past a few
// sweeps (2 s) after ORDERFLOW_PAY_QUERY_AFTER (2 s), so the query path
// gets there first for every order still pending.
const lostNotifyRetry = 9 * time.Second

// checkout opens the buyer's Alipay payment: POST /orders/{no}/pay. It
// reports whether the fake holds the order's trade (so the buyer can pay
// it); an order that left pending first (409) is paid through the
// simulator instead.
func (w *workload) checkout(ctx context.Context, b buyer, orderNo string, api int) (bool, error) {
	err := retry(ctx, 30*time.Second, func() (bool, error) {
		ans, err := w.http.do(ctx, "POST", w.c.apiURLs[api]+"/api/v1/orders/"+orderNo+"/pay", b.token,
			map[string]any{"provider": ProviderAlipay})
		if ans.transient(err) {
			return false, fmt.Errorf("checkout: %d %v", ans.status, err)
		}
		switch ans.status {
		case 200, 409:
			return true, nil
		}
		return false, finalf("checkout: %d %s", ans.status, ans.body)
	})
	if err != nil && !errors.Is(err, errFinal) {
		// Gave up: whatever the fake holds decides how the buyer pays.
		err = nil
	}
	started := w.c.ali.fake.TradeNo(orderNo) != ""
	if started {
		w.countAlipay(func(s *AlipayStats) { s.Checkouts++ })
	}
	return started, err
}

func (w *workload) countAlipay(f func(*AlipayStats)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f(&w.alipay)
}

// redeliverAlipay is Alipay's retry schedule after the faults: every order
// the fake made paid whose notification orderflow never acknowledged (its
// story gave up, or ended first) is notified again until it is.
func (w *workload) redeliverAlipay(ctx context.Context) int {
	w.mu.Lock()
	var orders []string
	for no := range w.aliPaid {
		orders = append(orders, no)
	}
	w.mu.Unlock()
	n := 0
	for _, no := range orders {
		trade := w.c.ali.fake.TradeNo(no)
		w.hist.mu.Lock()
		_, acked := w.hist.payments[trade]
		w.hist.mu.Unlock()
		if acked {
			continue
		}
		n++
		if err := w.notifyAlipay(ctx, no, 1); err != nil {
			w.out.Printf("alipay: notification of %s still not acknowledged: %v", no, err)
		}
	}
	return n
}

// alipayFigures completes the Alipay figures from the ledger, and lists
// every order the fake made paid whose Alipay trade the ledger lacks: money
// taken and neither delivered nor refunded.
func alipayFigures(ctx context.Context, db *sql.DB, a *alipayRig, w *workload) (*AlipayStats, []string, error) {
	var nos []string
	err := query(ctx, db, func(rows *sql.Rows) error {
		var no string
		if err := rows.Scan(&no); err != nil {
			return err
		}
		nos = append(nos, no)
		return nil
	}, `SELECT refund_no FROM refunds WHERE provider = ?`, ProviderAlipay)
	if err != nil {
		return nil, nil, err
	}
	s := a.stats(nos)
	w.mu.Lock()
	s.Checkouts, s.Paid, s.Lost = w.alipay.Checkouts, w.alipay.Paid, w.alipay.Lost
	paid := make([]string, 0, len(w.aliPaid))
	for no := range w.aliPaid {
		paid = append(paid, no)
	}
	w.mu.Unlock()
	var missing []string
	for _, no := range paid {
		trade := a.fake.TradeNo(no)
		var n int
		err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM payments p JOIN orders o ON o.id = p.order_id
			WHERE p.provider = ? AND p.trade_no = ? AND o.order_no = ?`, ProviderAlipay, trade, no).Scan(&n)
		if err != nil {
			return nil, nil, err
		}
		if n != 1 {
			missing = append(missing, fmt.Sprintf("order %s was paid at Alipay (trade %s) but the ledger has %d such payments", no, trade, n))
		}
	}
	return &s, missing, nil
}
