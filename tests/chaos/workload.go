package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Scenarios a client plays, each a buyer's (or a group's) whole story.
const (
	scOnTime        = "pay-on-time"            // pay once, in time
	scBurst         = "pay-same-trade-twice"   // a burst of one notification, then a replay
	scSecondTrade   = "pay-by-second-trade"    // paid, then paid again by another trade
	scWrongAmount   = "pay-wrong-amount"       // wrong amount (then, sometimes, the right one)
	scCancelThenPay = "cancel-then-pay"        // buyer cancels, the payment lands after
	scCancel        = "cancel"                 // buyer cancels
	scExpireThenPay = "expire-then-pay"        // 4 s order left to close, paid after
	scPayAtExpiry   = "pay-at-expiry"          // paid right around its close
	scAbandon       = "abandon"                // never paid: closes at expiry
	scTwoTrades     = "two-trades-at-once"     // two trades pay one order concurrently
	scCancelPayRace = "cancel-pay-race"        // the buyer cancels while the payment lands
	scCancelTwoPays = "cancel-then-two-trades" // HA only: cancelled, two trades land after; their refunds finish together
	scGroup         = "group-buy"              // owner opens, members join, settles at deadline
	scGroupShort    = "group-buy-short"        // one member cannot pay: FAILED
)

var scenarioWeights = []struct {
	name   string
	weight int
	haOnly bool // played only in an HA run (the other runs pick as before)
}{
	{scOnTime, 30, false}, {scBurst, 8, false}, {scSecondTrade, 7, false}, {scWrongAmount, 6, false}, {scCancelThenPay, 6, false},
	{scCancel, 5, false}, {scExpireThenPay, 6, false}, {scPayAtExpiry, 6, false}, {scAbandon, 5, false}, {scTwoTrades, 5, false},
	{scCancelPayRace, 5, false}, {scGroup, 8, false}, {scGroupShort, 3, false},
	{scPartialRefund, 5, false}, {scManualPay, 3, false}, {scManualLate, 2, false},
	// Two refunds of one order whose completions may run on two Galera
	// nodes at once: the order must still end refunded.
	{scCancelTwoPays, 5, true},
}

// Scenarios lists every scenario in report order.
var Scenarios = func() []string {
	var out []string
	for _, s := range scenarioWeights {
		out = append(out, s.name)
	}
	return out
}()

type buyer struct {
	id    int64
	token string
}

type product struct {
	id    int64
	kind  string
	price int64
	card  bool
}

// ScenarioStats counts one scenario's runs: completed, refused by a final
// 4xx (out of stock, say), or given up when a step's retry budget ran out.
type ScenarioStats struct {
	Started, Completed, Refused, GaveUp int
}

// history is what clients were told happened (acknowledged writes); after
// quiescence every one of them must be in the ledger.
type history struct {
	mu       sync.Mutex
	orders   map[string]string // order_no → scenario
	owners   map[string]buyer  // order_no → its buyer
	payments map[string]string // trade_no → order_no
	cancels  map[string]bool
	groups   map[string]bool
	joins    map[string][]int64   // group_no → members acknowledged
	refunds  map[string]refundAck // Idempotency-Key → an operator refund granted (201)
}

func newHistory() *history {
	return &history{orders: map[string]string{}, owners: map[string]buyer{}, payments: map[string]string{}, cancels: map[string]bool{},
		groups: map[string]bool{}, joins: map[string][]int64{}, refunds: map[string]refundAck{}}
}

// workload drives the cluster from concurrent clients that tolerate errors.
type workload struct {
	seed int64
	c    *cluster
	out  *progress
	http *httpClient

	buyers   []buyer
	poor     []buyer
	products []product

	hist     *history
	tradeSeq atomic.Int64
	flip     atomic.Int64 // alternates the operator between refund and retry

	mu    sync.Mutex
	stats map[string]*ScenarioStats
	// operator counts the operator's actions (refund and order retries).
	operator map[string]int
	// refusals counts final answers by step, status and error code.
	refusals map[string]int
	// alipay counts an Alipay run's checkouts and payments; aliPaid is
	// every order the fake made paid.
	alipay  AlipayStats
	aliPaid map[string]bool
}

func newWorkload(seed int64, c *cluster, out *progress) (*workload, error) {
	hc, err := newHTTPClient(c.apiURLs)
	if err != nil {
		return nil, err
	}
	return &workload{seed: seed, c: c, out: out, http: hc, hist: newHistory(),
		stats: map[string]*ScenarioStats{}, operator: map[string]int{}, refusals: map[string]int{},
		aliPaid: map[string]bool{}}, nil
}

func (w *workload) count(sc string, f func(*ScenarioStats)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats[sc]
	if s == nil {
		s = &ScenarioStats{}
		w.stats[sc] = s
	}
	f(s)
}

func (w *workload) admin(ctx context.Context, method, path string, body, out any) error {
	return retry(ctx, 60*time.Second, func() (bool, error) {
		a, err := w.http.do(ctx, method, w.c.apiURLs[0]+path, w.c.adminToken, body)
		if a.transient(err) {
			return false, fmt.Errorf("%s %s: %d %v", method, path, a.status, err)
		}
		if a.status >= 300 {
			return false, finalf("%s %s: %d %s", method, path, a.status, a.body)
		}
		if out != nil {
			return true, decodeInto(a, out)
		}
		return true, nil
	})
}

// setup creates buyers, products and card keys (before any fault).
func (w *workload) setup(ctx context.Context, nBuyers int) error {
	newUser := func(name string, balance int64) (buyer, error) {
		var u struct {
			ID    int64  `json:"id"`
			Token string `json:"token"`
		}
		err := w.admin(ctx, "POST", "/api/v1/admin/users", map[string]any{"name": name, "balance_cents": balance}, &u)
		return buyer{id: u.ID, token: u.Token}, err
	}
	for i := range nBuyers {
		b, err := newUser(fmt.Sprintf("buyer-%d", i), 50_000)
		if err != nil {
			return err
		}
		w.buyers = append(w.buyers, b)
	}
	for i := range 3 {
		b, err := newUser(fmt.Sprintf("poor-%d", i), 0)
		if err != nil {
			return err
		}
		w.poor = append(w.poor, b)
	}
	type spec struct {
		body  map[string]any
		cards int
	}
	for _, s := range []spec{
		{map[string]any{"sku": "card-common", "kind": "card", "price_cents": 500}, 2000},
		{map[string]any{"sku": "card-scarce", "kind": "card", "price_cents": 1200}, 40},
		{map[string]any{"sku": "sub-month", "kind": "subscription", "price_cents": 300, "days": 30}, 0},
		{map[string]any{"sku": "sub-limited", "kind": "subscription", "price_cents": 450, "days": 7, "stock": 400}, 0},
		{map[string]any{"sku": "topup", "kind": "recharge", "price_cents": 900, "credit_cents": 1000}, 0},
		{map[string]any{"sku": "topup-limited", "kind": "recharge", "price_cents": 200, "credit_cents": 200, "stock": 400}, 0},
	} {
		var out struct {
			ID int64 `json:"id"`
		}
		if err := w.admin(ctx, "POST", "/api/v1/admin/products", s.body, &out); err != nil {
			return err
		}
		p := product{id: out.ID, kind: s.body["kind"].(string), price: int64(s.body["price_cents"].(int))}
		p.card = p.kind == "card"
		if s.cards > 0 {
			codes := make([]string, s.cards)
			for i := range codes {
				codes[i] = fmt.Sprintf("CHAOS-%d-%d-%05d-%s", w.seed, p.id, i, randHex(4))
			}
			if err := w.admin(ctx, "POST", fmt.Sprintf("/api/v1/admin/products/%d/cards", p.id), map[string]any{"codes": codes}, nil); err != nil {
				return err
			}
		}
		w.products = append(w.products, p)
	}
	return nil
}

// run plays scenarios from n clients until the deadline.
func (w *workload) run(ctx context.Context, clients int, until time.Time) {
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w.seed), uint64(i)+1))
			for time.Now().Before(until) && ctx.Err() == nil {
				w.play(ctx, rng, pickScenario(rng, w.c.ha != nil))
				time.Sleep(time.Duration(50+rng.IntN(250)) * time.Millisecond)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for time.Now().Before(until) && ctx.Err() == nil {
			w.operate(ctx)
			select {
			case <-ctx.Done():
			case <-time.After(3 * time.Second):
			}
		}
	}()
	wg.Wait()
}

func pickScenario(rng *rand.Rand, ha bool) string {
	total := 0
	for _, s := range scenarioWeights {
		if ha || !s.haOnly {
			total += s.weight
		}
	}
	n := rng.IntN(total)
	for _, s := range scenarioWeights {
		if s.haOnly && !ha {
			continue
		}
		if n < s.weight {
			return s.name
		}
		n -= s.weight
	}
	return scOnTime
}

// play runs one scenario; a step that cannot get through within its budget
// ends the scenario ("gave up"), which is the client's right.
func (w *workload) play(ctx context.Context, rng *rand.Rand, sc string) {
	w.count(sc, func(s *ScenarioStats) { s.Started++ })
	var err error
	if sc == scGroup || sc == scGroupShort {
		err = w.groupBuy(ctx, rng, sc == scGroupShort)
	} else {
		err = w.orderStory(ctx, rng, sc)
	}
	switch {
	case errors.Is(err, errFinal):
		w.count(sc, func(s *ScenarioStats) { s.Refused++ })
		w.mu.Lock()
		w.refusals[refusalReason(err)]++
		w.mu.Unlock()
		return
	case err != nil:
		w.count(sc, func(s *ScenarioStats) { s.GaveUp++ })
		w.mu.Lock()
		w.refusals["gave up: "+gaveUpReason(err)]++
		w.mu.Unlock()
		return
	}
	w.count(sc, func(s *ScenarioStats) { s.Completed++ })
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

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

// groupBuy opens a group with a deadline a few seconds away and has members
// join; short adds a member with an empty wallet.
func (w *workload) groupBuy(ctx context.Context, rng *rand.Rand, short bool) error {
	owner := w.buyers[rng.IntN(len(w.buyers))]
	deadline := time.Now().Add(time.Duration(2500+rng.IntN(3000)) * time.Millisecond).UTC()
	price := int64(300 + rng.IntN(7)*100)
	var g struct {
		GroupNo string `json:"group_no"`
	}
	err := retry(ctx, 10*time.Second, func() (bool, error) {
		a, err := w.http.do(ctx, "POST", w.c.apiURLs[0]+"/api/v1/groups", owner.token,
			map[string]any{"title": "chaos group", "price_cents": price, "deadline": deadline.Format(time.RFC3339Nano)})
		if a.transient(err) {
			return false, fmt.Errorf("create group: %d %v", a.status, err)
		}
		if a.status != 201 {
			return false, finalf("create group: %d %s", a.status, a.body)
		}
		return true, decodeInto(a, &g)
	})
	if err != nil {
		return err
	}
	w.hist.mu.Lock()
	w.hist.groups[g.GroupNo] = true
	w.hist.mu.Unlock()
	members := map[int64]buyer{}
	for len(members) < 2+rng.IntN(3) {
		b := w.buyers[rng.IntN(len(w.buyers))]
		if b.id != owner.id {
			members[b.id] = b
		}
	}
	if short {
		p := w.poor[rng.IntN(len(w.poor))]
		members[p.id] = p
	}
	joined := 0
	for _, id := range sortedIDs(members) {
		m := members[id]
		err := retry(ctx, time.Until(deadline), func() (bool, error) {
			a, err := w.http.do(ctx, "POST", w.c.apiURLs[0]+"/api/v1/groups/"+g.GroupNo+"/join", m.token, nil)
			if a.transient(err) {
				return false, fmt.Errorf("join: %d %v", a.status, err)
			}
			switch {
			case a.status == 200:
				w.hist.mu.Lock()
				w.hist.joins[g.GroupNo] = append(w.hist.joins[g.GroupNo], m.id)
				w.hist.mu.Unlock()
				return true, nil
			case a.status == 409 && containsCode(a.body, "already_joined"):
				return true, nil // an earlier try got in; its answer was lost
			}
			return false, finalf("join: %d %s", a.status, a.body)
		})
		if err == nil {
			joined++
		}
	}
	if joined == 0 {
		return fmt.Errorf("group %s: nobody could join", g.GroupNo)
	}
	if !short && rng.IntN(3) == 0 {
		// A late joiner racing the close: refused (409) or in and charged, never in and uncharged.
		late := w.buyers[rng.IntN(len(w.buyers))]
		sleep(ctx, time.Until(deadline.Add(time.Duration(rng.IntN(400)-250)*time.Millisecond)))
		a, err := w.http.do(ctx, "POST", w.c.apiURLs[0]+"/api/v1/groups/"+g.GroupNo+"/join", late.token, nil)
		if err == nil && a.status == 200 {
			w.hist.mu.Lock()
			w.hist.joins[g.GroupNo] = append(w.hist.joins[g.GroupNo], late.id)
			w.hist.mu.Unlock()
		}
	}
	return nil
}

func containsCode(body []byte, code string) bool {
	return strings.Contains(string(body), `"code":"`+code+`"`)
}

func sortedIDs(m map[int64]buyer) []int64 {
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// operate is the on-call operator: it retries refunds handed to manual and
// orders that ran out of activation attempts, once everything works again.
func (w *workload) operate(ctx context.Context) {
	var refunds struct {
		Refunds []struct {
			RefundNo string `json:"refund_no"`
		} `json:"refunds"`
	}
	a, err := w.http.do(ctx, "GET", w.c.apiURLs[0]+"/api/v1/admin/refunds?status=manual&limit=500", w.c.adminToken, nil)
	if err == nil && a.status == 200 && decodeInto(a, &refunds) == nil {
		for _, r := range refunds.Refunds {
			a, err := w.http.do(ctx, "POST", w.c.apiURLs[0]+"/api/v1/admin/refunds/"+r.RefundNo+"/retry", w.c.adminToken, nil)
			switch {
			case err == nil && a.status == 200:
				w.countOperator("refund retried")
			case err == nil && a.status == 409 && containsCode(a.body, "manual_payment"):
				// Manual money: no provider can return it; the operator
				// hands it back and says so.
				a, err := w.http.do(ctx, "POST", w.c.apiURLs[0]+"/api/v1/admin/refunds/"+r.RefundNo+"/resolve", w.c.adminToken,
					map[string]any{"note": "chaos: transferred back"})
				if err == nil && a.status == 200 {
					w.countOperator("manual payment's refund resolved")
				}
			}
		}
	}
	for drained := false; !drained; {
		select {
		case no := <-w.c.groupRetries:
			a, err := w.http.do(ctx, "POST", w.c.apiURLs[0]+"/api/v1/admin/groups/"+no+"/retry", w.c.adminToken, nil)
			switch {
			case err == nil && a.status == 200:
				w.countOperator("exhausted group retried")
			case err != nil || a.status >= 500:
				w.c.groupRetries <- no // try again next round
				drained = true
			}
		default:
			drained = true
		}
	}
	var orders struct {
		Orders []struct {
			OrderNo string `json:"order_no"`
		} `json:"orders"`
	}
	a, err = w.http.do(ctx, "GET", w.c.apiURLs[0]+"/api/v1/admin/orders?status=failed&limit=500", w.c.adminToken, nil)
	if err == nil && a.status == 200 && decodeInto(a, &orders) == nil {
		for _, o := range orders.Orders {
			// Half the failed orders are refunded, half retried; a refund of
			// an order whose effect was applied is refused (409), so retry it.
			if w.flip.Add(1)%2 == 1 {
				a, err := w.http.do(ctx, "POST", w.c.apiURLs[0]+"/api/v1/admin/orders/"+o.OrderNo+"/refund", w.c.adminToken, nil)
				if err == nil && a.status == 200 {
					w.countOperator("failed order refunded")
					continue
				}
				if err != nil || a.status != 409 {
					continue
				}
			}
			a, err := w.http.do(ctx, "POST", w.c.apiURLs[0]+"/api/v1/admin/orders/"+o.OrderNo+"/retry", w.c.adminToken, nil)
			if err == nil && a.status == 200 {
				w.countOperator("failed order retried")
			}
		}
	}
}

func (w *workload) countOperator(what string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.operator[what]++
}

// refusalReason condenses a final error to "step status code".
func refusalReason(err error) string {
	msg := strings.TrimPrefix(err.Error(), errFinal.Error()+": ")
	step, rest, _ := strings.Cut(msg, ":")
	status := strings.Fields(rest)
	code := ""
	if i := strings.Index(rest, `"code":"`); i >= 0 {
		code = rest[i+8:]
		if j := strings.IndexByte(code, '"'); j >= 0 {
			code = code[:j]
		}
	}
	if len(status) > 0 {
		step += " " + status[0]
	}
	return strings.TrimSpace(step + " " + code)
}

// gaveUpReason condenses a spent retry budget's last error to its step and
// what it last saw ("pay 502", "create no answer").
func gaveUpReason(err error) string {
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "gave up") {
		msg = rest
	}
	step, rest, _ := strings.Cut(msg, ":")
	f := strings.Fields(rest)
	switch {
	case len(f) > 0 && f[0] != "0":
		return step + " " + f[0]
	case strings.Contains(rest, "refused"):
		return step + " connection refused"
	case strings.Contains(rest, "deadline") || strings.Contains(rest, "Timeout"):
		return step + " timeout"
	}
	return step + " no answer"
}
