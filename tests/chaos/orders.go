package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// One buyer's order story as a chaos client plays it: create, pay (once, twice,
// late), look, cancel, each through a randomly chosen API process.

func (w *workload) orderStory(ctx context.Context, rng *rand.Rand, sc string) error {
	b := w.buyers[rng.IntN(len(w.buyers))]
	p := w.products[rng.IntN(len(w.products))]
	qty := 1 + rng.IntN(3)
	if p.card {
		qty = 1 + rng.IntN(2)
	}
	api := 0
	switch sc {
	case scExpireThenPay, scPayAtExpiry:
		api = 1
	case scOnTime, scAbandon:
		if rng.IntN(4) == 0 {
			api = 1
		}
	}
	no, amount, err := w.create(ctx, b, p, qty, api, sc)
	if err != nil {
		return err
	}
	trade := w.newTrade
	// In an Alipay run the buyer checks out at Alipay first (so the close
	// asks Alipay before it closes), and the story's first payment goes
	// through the fake, whose notification is now and then lost; further
	// trades (a second payment, a wrong amount Alipay cannot produce) come
	// through the simulator: the buyer paid at two providers.
	ali := false
	if w.c.ali != nil {
		if ali, err = w.checkout(ctx, b, no, api); err != nil {
			return err
		}
	}
	lost := ali && rng.IntN(4) == 0
	firstPay := func(times int) error {
		if ali {
			return w.payAlipay(ctx, no, times, lost)
		}
		return w.pay(ctx, no, amount, trade(), times)
	}
	// The buyer's own reads go on beside the story, racing its moves.
	lrng := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
	looking := make(chan struct{})
	defer func() { <-looking }()
	go func() {
		defer close(looking)
		w.look(ctx, lrng, b, no, 2+lrng.IntN(4))
	}()
	switch sc {
	case scOnTime:
		return firstPay(1)
	case scBurst:
		if ali {
			if err := w.payAlipay(ctx, no, 2+rng.IntN(4), lost); err != nil {
				return err
			}
			sleep(ctx, time.Duration(200+rng.IntN(1500))*time.Millisecond)
			return w.payAlipay(ctx, no, 1, false)
		}
		t := trade()
		if err := w.pay(ctx, no, amount, t, 2+rng.IntN(4)); err != nil {
			return err
		}
		sleep(ctx, time.Duration(200+rng.IntN(1500))*time.Millisecond)
		return w.pay(ctx, no, amount, t, 1)
	case scSecondTrade:
		if err := firstPay(1); err != nil {
			return err
		}
		sleep(ctx, time.Duration(rng.IntN(2000))*time.Millisecond)
		return w.pay(ctx, no, amount, trade(), 1)
	case scWrongAmount:
		if err := w.pay(ctx, no, amount+int64(1+rng.IntN(50)), trade(), 1); err != nil {
			return err
		}
		if rng.IntN(2) == 0 {
			return firstPay(1)
		}
		return nil
	case scCancelThenPay:
		if err := w.cancel(ctx, b, no, api); err != nil {
			return err
		}
		w.look(ctx, rng, b, no, 1) // sees (and caches) closed
		return both(
			func() error { return firstPay(1) },
			func() error { w.look(ctx, rng, b, no, 3); return nil })
	case scCancel:
		return w.cancel(ctx, b, no, api)
	case scExpireThenPay:
		sleep(ctx, shortTTL+time.Duration(1500+rng.IntN(1500))*time.Millisecond)
		w.look(ctx, rng, b, no, 1)
		return both(
			func() error { return firstPay(1) },
			func() error { w.look(ctx, rng, b, no, 3); return nil })
	case scPayAtExpiry:
		sleep(ctx, shortTTL+time.Duration(rng.IntN(1200)-600)*time.Millisecond)
		return both(
			func() error { return firstPay(1) },
			func() error { w.look(ctx, rng, b, no, 3); return nil })
	case scAbandon:
		return nil
	case scTwoTrades:
		return both(
			func() error { return firstPay(1) },
			func() error { return w.pay(ctx, no, amount, trade(), 1) })
	case scCancelTwoPays:
		if err := w.cancel(ctx, b, no, api); err != nil {
			return err
		}
		return both(
			func() error { return firstPay(1) },
			func() error { return w.pay(ctx, no, amount, trade(), 1) })
	case scCancelPayRace:
		return both(
			func() error { return w.cancel(ctx, b, no, api) },
			func() error { return firstPay(1) })
	case scPartialRefund:
		return w.partialRefund(ctx, rng, no, amount, func() error { return firstPay(1) })
	case scManualPay:
		return w.manualPayment(ctx, rng, no, amount)
	case scManualLate:
		if err := w.cancel(ctx, b, no, api); err != nil {
			return err
		}
		return w.manualPayment(ctx, rng, no, amount)
	}
	return fmt.Errorf("unknown scenario %s", sc)
}

// look is the buyer checking on the order (as buyers do while they wait);
// its answer does not matter, but its reads race the moves.
func (w *workload) look(ctx context.Context, rng *rand.Rand, b buyer, orderNo string, times int) {
	for i := range times {
		if i > 0 {
			sleep(ctx, time.Duration(50+rng.IntN(250))*time.Millisecond)
		}
		_, _ = w.http.do(ctx, "GET", w.c.apiURLs[rng.IntN(len(w.c.apiURLs))]+"/api/v1/orders/"+orderNo, b.token, nil)
	}
}

// both runs a and b at once and returns the first error.
func both(a, b func() error) error {
	errs := make(chan error, 1)
	go func() { errs <- b() }()
	errA := a()
	errB := <-errs
	if errA != nil {
		return errA
	}
	return errB
}

func (w *workload) newTrade() string {
	return fmt.Sprintf("TC%d-%d", w.seed, w.tradeSeq.Add(1))
}

// create places an order, retrying under one Idempotency-Key so a create
// whose answer was lost returns the first order instead of a second one.
func (w *workload) create(ctx context.Context, b buyer, p product, qty, api int, sc string) (string, int64, error) {
	key := "chaos-" + randHex(8)
	var out struct {
		OrderNo     string `json:"order_no"`
		AmountCents int64  `json:"amount_cents"`
	}
	err := retry(ctx, 30*time.Second, func() (bool, error) {
		a, err := w.http.do(ctx, "POST", w.c.apiURLs[api]+"/api/v1/orders", b.token,
			map[string]any{"product_id": p.id, "quantity": qty}, "Idempotency-Key", key)
		if a.transient(err) {
			return false, fmt.Errorf("create: %d %v", a.status, err)
		}
		if a.status != 201 && a.status != 200 {
			return false, finalf("create: %d %s", a.status, a.body)
		}
		return true, decodeInto(a, &out)
	})
	if err != nil {
		return "", 0, err
	}
	w.hist.mu.Lock()
	w.hist.orders[out.OrderNo] = sc
	w.hist.owners[out.OrderNo] = b
	w.hist.mu.Unlock()
	return out.OrderNo, out.AmountCents, nil
}

// pay asks the simulator to notify orderflow (times copies at once),
// resending the same trade until orderflow acknowledges it.
func (w *workload) pay(ctx context.Context, orderNo string, amount int64, trade string, times int) error {
	body := map[string]any{"order_no": orderNo, "amount_cents": amount, "trade_no": trade, "times": times}
	return retry(ctx, 40*time.Second, func() (bool, error) {
		a, err := w.http.do(ctx, "POST", "http://"+w.c.proxy.Addr()+"/admin/pay", "", body)
		if a.transient(err) {
			return false, fmt.Errorf("pay: %d %v", a.status, err)
		}
		if a.status != 200 {
			return false, finalf("pay: %d %s", a.status, a.body)
		}
		var res struct {
			StatusCodes []int `json:"status_codes"`
		}
		if err := decodeInto(a, &res); err != nil {
			return false, err
		}
		acked, transient := false, false
		for _, code := range res.StatusCodes {
			switch {
			case code == 200:
				acked = true
			case code == 0 || code >= 500:
				transient = true
			}
		}
		if acked {
			w.hist.mu.Lock()
			w.hist.payments[trade] = orderNo
			w.hist.mu.Unlock()
			return true, nil
		}
		if transient {
			return false, fmt.Errorf("pay: orderflow answered %v", res.StatusCodes)
		}
		return false, finalf("pay %s: orderflow answered %v", orderNo, res.StatusCodes)
	})
}

// cancel is the buyer's cancel; 409 means the order already left pending
// (a cancel whose answer was lost, or the close got there first).
func (w *workload) cancel(ctx context.Context, b buyer, orderNo string, api int) error {
	return retry(ctx, 30*time.Second, func() (bool, error) {
		a, err := w.http.do(ctx, "POST", w.c.apiURLs[api]+"/api/v1/orders/"+orderNo+"/cancel", b.token, nil)
		if a.transient(err) {
			return false, fmt.Errorf("cancel: %d %v", a.status, err)
		}
		switch a.status {
		case 200:
			w.hist.mu.Lock()
			w.hist.cancels[orderNo] = true
			w.hist.mu.Unlock()
			return true, nil
		case 409:
			return true, nil
		}
		return false, finalf("cancel: %d %s", a.status, a.body)
	})
}
