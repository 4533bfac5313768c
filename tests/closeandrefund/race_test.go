package closeandrefund

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"orderflow/internal/domain/refund"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"
)

// payGroup is where, relative to its order's life, a payment is aimed.
type payGroup int

const (
	// justBefore pays in the last 5 ms of the order's life.
	justBefore payGroup = iota
	// justAfter pays in the first 5 ms after expire_at. The close task is
	// not due yet (see atClose), so these should all be delivered.
	justAfter
	// atClose pays from 5 ms before to 2 s after the moment the close
	// task becomes due, densest near it (the offset grows with the square of
	// a uniform draw: 30 % within 200 ms): asynq schedules in whole seconds,
	// so the close is due at the first whole second at or after expire_at and
	// runs as soon as the forwarder (50 ms tick) and a worker pick it up.
	// Under -race on 2 loaded cores that is 0.1–1.5 s after it is due, and a
	// window of 200 ms left the race unexercised in some runs (every payment
	// beat its close), so the tail reaches past the close's usual lag. This
	// is where payment and close race.
	atClose
)

func (g payGroup) String() string {
	return [...]string{"just-before-expiry", "just-after-expiry", "at-close"}[g]
}

// racedOrder is one order of the race and its payment.
type racedOrder struct {
	created
	buyer int
	group payGroup
	payAt time.Time
	// set by the payment goroutine
	sentAt  time.Time
	tradeNo string
	err     error
}

// Done-when 1: 500 orders, each paid within a few ms of its expiry while the
// close tasks run. Every order ends finished (never closed) or closed and
// refunded; no key is both sold and recycled; no money is kept for an order
// that was not delivered and nothing is refunded for one that was.
func TestPaymentsRaceTheClose(t *testing.T) {
	const (
		nOrders        = 500
		nBuyers        = 50
		nProducts      = 4
		keysPerProduct = 126 // 504 keys: enough for every order even if none closed
		ttl            = 3 * time.Second
		createEvery    = 8 * time.Millisecond // 125 orders/s
	)
	s := testenv.Start(t, testenv.Options{Configure: func(c *svc.Config) {
		c.OrderTTL = svc.Duration(ttl)
		c.MaxPending = nOrders/nBuyers + 1
		c.LogLevel = "error" // hundreds of expected late-payment and fast-path warnings
	}})
	pids := make([]int64, nProducts)
	for i := range pids {
		pids[i] = s.NewProduct(t, map[string]any{"sku": fmt.Sprintf("race-%d", i), "kind": "card", "price_cents": 100 + i})
		s.AddCards(t, pids[i], fmt.Sprintf("RACE%d", i), keysPerProduct)
	}
	buyers := newBuyers(t, s, "racer", nBuyers)

	// Create the orders; as each comes back, arm a timer that pays it at its
	// aimed time. Offsets are spread deterministically over each window.
	orders := make([]*racedOrder, nOrders)
	var pays sync.WaitGroup
	var lateArm int
	var armMu sync.Mutex
	createStart := time.Now()
	err := parallel(nOrders, 12, func(i int) error {
		// Paced: the payments (and closes) come at the rate the orders
		// were made, and at full speed under -race on 2 cores the worker
		// falls behind and closes run seconds late, so that every payment
		// beats its close.
		time.Sleep(time.Until(createStart.Add(time.Duration(i) * createEvery)))
		o, err := mustCreate(buyers[i%nBuyers], pids[i%nProducts], 1)
		if err != nil {
			return err
		}
		r := &racedOrder{created: o, buyer: i % nBuyers}
		frac := time.Duration((i*7919)%1000) * time.Microsecond // 0…1 ms, scrambled
		switch i % 4 {
		case 0:
			r.group, r.payAt = justBefore, o.ExpireAt.Add(-5*frac-time.Microsecond)
		case 1:
			r.group, r.payAt = justAfter, o.ExpireAt.Add(5*frac)
		default:
			f := float64(frac) / float64(time.Millisecond) // 0…1
			r.group, r.payAt = atClose, ceilSecond(o.ExpireAt).Add(-5*time.Millisecond+time.Duration(f*f*float64(2*time.Second)))
		}
		orders[i] = r
		wait := time.Until(r.payAt)
		if wait < 0 {
			armMu.Lock()
			lateArm++
			armMu.Unlock()
		}
		pays.Add(1)
		time.AfterFunc(wait, func() {
			defer pays.Done()
			r.sentAt = time.Now()
			r.tradeNo, r.err = payOrder(s, r.OrderNo, r.AmountCents, "")
		})
		return nil
	})
	if err != nil {
		t.Fatalf("create orders: %v", err)
	}
	t.Logf("created %d orders in %v (%d armed after their pay time had passed)", nOrders, time.Since(createStart).Round(time.Millisecond), lateArm)
	pays.Wait()
	var timerLag []time.Duration
	for _, r := range orders {
		if r.err != nil {
			t.Fatalf("payment of %s (%s): %v", r.OrderNo, r.group, r.err)
		}
		timerLag = append(timerLag, r.sentAt.Sub(r.payAt))
	}
	t.Logf("payment send lag behind its aimed time: %s", spread(timerLag))

	// Quiescence: every order terminal, nothing queued.
	testenv.Eventually(t, 90*time.Second, "every order finished or refunded", func() (bool, error) {
		c := statusCounts(t, s)
		return c["finished"]+c["refunded"] == nOrders, fmt.Errorf("orders by status: %v", c)
	})
	waitIdle(t, s, 30*time.Second)

	chk := newChecker(t)
	byNo := ordersByNo(t, s)
	byID := map[int64]model.Order{}
	for _, o := range byNo {
		byID[o.ID] = o
	}
	events := orderEvents(t, s)
	flows := flowsByOrder(t, s)
	effects := effectCounts(t, s)

	// 1. Every order is finished without ever having closed, or went
	// closed→refunding→refunded.
	finished, refunded := map[string]bool{}, map[string]bool{}
	perGroup := map[payGroup][2]int{}
	for _, r := range orders {
		o := byNo[r.OrderNo]
		p := path(events[r.OrderNo])
		g := perGroup[r.group]
		switch o.Status {
		case model.OrderFinished:
			finished[r.OrderNo] = true
			g[0]++
			for _, e := range events[r.OrderNo] {
				if e.ToStatus == "closed" || e.ToStatus == "refunding" || e.ToStatus == "refunded" {
					chk.errorf("finished order %s passed through %s: %s", r.OrderNo, e.ToStatus, p)
				}
			}
			if want := "-→pending,pending→paid,paid→claimed"; len(p) < len(want) || p[:len(want)] != want {
				chk.errorf("finished order %s: history %s, want it to start %s", r.OrderNo, p, want)
			}
			if !slices.Equal(flows[o.ID], []model.FlowKind{model.FlowLock, model.FlowSell}) {
				chk.errorf("finished order %s: stock flows %v, want [lock sell]", r.OrderNo, flows[o.ID])
			}
			if effects[o.ID] != 1 {
				chk.errorf("finished order %s: %d delivery effects, want 1", r.OrderNo, effects[o.ID])
			}
		case model.OrderRefunded:
			refunded[r.OrderNo] = true
			g[1]++
			if want := "-→pending,pending→closed,closed→refunding,refunding→refunded"; p != want {
				chk.errorf("refunded order %s: history %s, want %s", r.OrderNo, p, want)
			}
			if !slices.Equal(flows[o.ID], []model.FlowKind{model.FlowLock, model.FlowCloseRestore}) {
				chk.errorf("refunded order %s: stock flows %v, want [lock close-restore]", r.OrderNo, flows[o.ID])
			}
			if effects[o.ID] != 0 {
				chk.errorf("refunded order %s was delivered (%d effects)", r.OrderNo, effects[o.ID])
			}
		default:
			chk.errorf("order %s (%s) ended %s: %s", r.OrderNo, r.group, o.Status, p)
		}
		perGroup[r.group] = g
	}

	// 2. Keys: every SOLD key belongs to a finished order, every finished
	// order holds exactly its quantity of SOLD keys, no key of a refunded
	// order is SOLD, and nothing is left LOCKED.
	soldPer := map[int64]int{}
	keyStatus := map[model.CardStatus]int{}
	for _, k := range cardKeys(t, s) {
		keyStatus[k.Status]++
		switch k.Status {
		case model.CardSold:
			if k.OrderID == nil || byID[*k.OrderID].Status != model.OrderFinished {
				chk.errorf("key %d is SOLD for order %v, which is not finished", k.ID, k.OrderID)
				continue
			}
			soldPer[*k.OrderID]++
		case model.CardRecycled:
			if k.OrderID != nil && byID[*k.OrderID].Status == model.OrderFinished {
				chk.errorf("key %d was RECYCLED from under finished order %s", k.ID, byID[*k.OrderID].OrderNo)
			}
		case model.CardLocked:
			chk.errorf("key %d still LOCKED for order %v", k.ID, k.OrderID)
		}
	}
	for no := range finished {
		o := byNo[no]
		if soldPer[o.ID] != o.Quantity {
			chk.errorf("finished order %s holds %d SOLD keys, want %d", no, soldPer[o.ID], o.Quantity)
		}
	}
	if keyStatus[model.CardSold] != len(finished) {
		chk.errorf("%d SOLD keys for %d finished orders", keyStatus[model.CardSold], len(finished))
	}

	// 3. Money: one payment per order; applied ones belong to finished
	// orders (and are the order's trade), late ones to refunded orders, each
	// with one succeeded refund under the deterministic number.
	payByOrder := paymentsByOrder(t, s)
	refByOrder := refundsByOrder(t, s)
	sim := s.Sim.Stats()
	for _, r := range orders {
		o := byNo[r.OrderNo]
		ps := payByOrder[o.ID]
		if len(ps) != 1 || ps[0].TradeNo != r.tradeNo {
			chk.errorf("order %s: payments %+v, want one with trade %s", r.OrderNo, ps, r.tradeNo)
			continue
		}
		p, rs := ps[0], refByOrder[o.ID]
		switch p.Disposition {
		case model.PaymentApplied:
			if o.Status != model.OrderFinished || o.TradeNo == nil || *o.TradeNo != p.TradeNo {
				chk.errorf("applied payment %s belongs to order %s in %s (trade %v)", p.TradeNo, r.OrderNo, o.Status, o.TradeNo)
			}
			if len(rs) != 0 {
				chk.errorf("delivered order %s has refunds %+v", r.OrderNo, rs)
			}
		case model.PaymentLate:
			if o.Status != model.OrderRefunded {
				chk.errorf("late payment %s belongs to order %s in %s", p.TradeNo, r.OrderNo, o.Status)
			}
			if len(rs) != 1 {
				chk.errorf("late-paid order %s has %d refunds, want 1", r.OrderNo, len(rs))
				continue
			}
			rf := rs[0]
			if rf.Status != model.RefundSucceeded || rf.AmountCents != p.AmountCents || rf.RefundNo != refund.Number(r.OrderNo, p.TradeNo) {
				chk.errorf("refund of late order %s: %s %s %d cents, want succeeded %s %d cents",
					r.OrderNo, rf.RefundNo, rf.Status, rf.AmountCents, refund.Number(r.OrderNo, p.TradeNo), p.AmountCents)
			}
			if got := sim.Refunds[rf.RefundNo].Executed; got != 1 {
				chk.errorf("provider executed refund %s of order %s %d times, want 1", rf.RefundNo, r.OrderNo, got)
			}
		default:
			chk.errorf("order %s: payment disposition %q", r.OrderNo, p.Disposition)
		}
	}
	if sim.MaxExecuted > 1 {
		chk.errorf("provider MaxExecuted = %d, want <= 1", sim.MaxExecuted)
	}
	if len(sim.Refunds) != len(refunded) {
		chk.errorf("provider saw %d refunds for %d refunded orders", len(sim.Refunds), len(refunded))
	}
	chk.done()

	// 4. The counters agree with the ledger once everything is at rest.
	waitCountersMatch(t, s, 10*time.Second, pids...)

	// Measurements: where payments landed, how late the closes ran.
	pays2 := map[string]time.Time{}
	for _, p := range paymentsOf(t, s) {
		pays2[p.TradeNo] = p.CreatedAt
	}
	arrival := map[payGroup][]time.Duration{}
	var closeLag, lateVsClose, deliveredVsDue []time.Duration
	refundedOnTime := 0
	for _, r := range orders {
		o := byNo[r.OrderNo]
		at := pays2[r.tradeNo]
		arrival[r.group] = append(arrival[r.group], at.Sub(o.ExpireAt))
		if o.ClosedAt != nil {
			closeLag = append(closeLag, o.ClosedAt.Sub(o.ExpireAt))
			lateVsClose = append(lateVsClose, at.Sub(*o.ClosedAt))
			if at.Before(o.ExpireAt) {
				refundedOnTime++
			}
		} else if r.group == atClose {
			deliveredVsDue = append(deliveredVsDue, at.Sub(ceilSecond(o.ExpireAt)))
		}
	}
	for g := justBefore; g <= atClose; g++ {
		t.Logf("%-18s finished %3d refunded %3d; payment recorded at expire_at + %s",
			g, perGroup[g][0], perGroup[g][1], spread(arrival[g]))
	}
	t.Logf("close lag (closed_at - expire_at) of the closed orders: %s", spread(closeLag))
	t.Logf("refunded payments, recorded at closed_at + %s (payments.created_at is taken before the payment's transaction waits for the close's row lock)", spread(lateVsClose))
	t.Logf("refunded payments recorded before expire_at: %d", refundedOnTime)
	t.Logf("at-close payments that were delivered, recorded at close-due time + %s", spread(deliveredVsDue))
	t.Logf("totals: %d finished, %d refunded; provider refunds %d, max executed %d", len(finished), len(refunded), len(sim.Refunds), sim.MaxExecuted)
	if len(finished) == 0 || len(refunded) == 0 {
		t.Errorf("the race was not exercised: %d finished, %d refunded (both outcomes expected)", len(finished), len(refunded))
	}
}

// checker collects assertion failures without flooding the log.
type checker struct {
	t *testing.T
	n int
}

func newChecker(t *testing.T) *checker { return &checker{t: t} }

func (c *checker) errorf(format string, args ...any) {
	c.t.Helper()
	c.n++
	if c.n <= 25 {
		c.t.Errorf(format, args...)
	}
}

// done reports how many failures were not printed.
func (c *checker) done() {
	c.t.Helper()
	if c.n > 25 {
		c.t.Errorf("… %d more failures like the above", c.n-25)
	}
}
