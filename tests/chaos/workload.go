package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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
