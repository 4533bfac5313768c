package closeandrefund

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"orderflow/internal/infra/stock"
	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/google/go-cmp/cmp"
)

// created is the answer to POST /api/v1/orders.
type created struct {
	OrderNo     string    `json:"order_no"`
	Status      string    `json:"status"`
	AmountCents int64     `json:"amount_cents"`
	ExpireAt    time.Time `json:"expire_at"`
}

// apiError is the API's error body.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// ignoreAt leaves an audit entry's time out of a comparison.
var ignoreAt = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".At" }, cmp.Ignore())

// createResult is one create call's outcome.
type createResult struct {
	Status int
	Code   string // the error code of a non-201 answer
	Order  created
}

// tryCreate creates an order; unlike testenv's CreateOrder it never touches a
// testing.T, so goroutines may call it.
func tryCreate(c *testenv.Client, productID int64, qty int) (createResult, error) {
	body, _ := json.Marshal(map[string]any{"product_id": productID, "quantity": qty})
	st, raw, err := c.Send("POST", "/api/v1/orders", body)
	if err != nil {
		return createResult{}, err
	}
	res := createResult{Status: st}
	if st == 201 {
		if err := json.Unmarshal(raw, &res.Order); err != nil {
			return res, fmt.Errorf("create: decode %q: %w", raw, err)
		}
		return res, nil
	}
	var e apiError
	_ = json.Unmarshal(raw, &e)
	res.Code = e.Error.Code
	return res, nil
}

// mustCreate is tryCreate for goroutines that need a 201.
func mustCreate(c *testenv.Client, productID int64, qty int) (created, error) {
	res, err := tryCreate(c, productID, qty)
	if err != nil {
		return created{}, err
	}
	if res.Status != 201 {
		return created{}, fmt.Errorf("create order: status %d %s", res.Status, res.Code)
	}
	return res.Order, nil
}

// cancelOrder is the buyer's cancel; safe from goroutines.
func cancelOrder(c *testenv.Client, orderNo string) error {
	st, raw, err := c.Send("POST", "/api/v1/orders/"+orderNo+"/cancel", nil)
	if err != nil {
		return err
	}
	if st != 200 {
		return fmt.Errorf("cancel %s: status %d %s", orderNo, st, raw)
	}
	return nil
}

// payOrder has the simulator send a signed payment notification (tradeNo ""
// lets it pick one) and returns the trade number; safe from goroutines.
func payOrder(s *testenv.Stack, orderNo string, amount int64, tradeNo string) (string, error) {
	trade, st, err := s.Pay.Pay(context.Background(), orderNo, amount, tradeNo)
	if err != nil {
		return trade, fmt.Errorf("pay %s: %w", orderNo, err)
	}
	if st != 200 {
		return trade, fmt.Errorf("pay %s: orderflow answered %d", orderNo, st)
	}
	return trade, nil
}

// manualAlerts counts the refund_manual alerts about refundNo.
func manualAlerts(t testing.TB, s *testenv.Stack, refundNo string) int {
	t.Helper()
	notes, err := s.SC.Store.NotificationsByKind(context.Background(), "refund_manual")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, x := range notes {
		// The subject names the number exactly; "-2" must not match its base.
		if strings.Contains(x.Subject, refundNo+" ") {
			n++
		}
	}
	return n
}

// cardShop adds a card product named sku at price with keys keys and n
// buyers named after it.
func cardShop(t *testing.T, s *testenv.Stack, sku string, price int64, keys, n int) (int64, []*testenv.Client) {
	t.Helper()
	return s.NewCardProduct(t, sku, price, keys), newBuyers(t, s, sku, n)
}

// newBuyers creates n buyers through the admin API and returns clients
// acting as them.
func newBuyers(t *testing.T, s *testenv.Stack, prefix string, n int) []*testenv.Client {
	t.Helper()
	out := make([]*testenv.Client, n)
	err := parallel(n, 16, func(i int) error {
		body, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("%s-%d", prefix, i), "balance_cents": 0})
		st, raw, err := s.Admin.Send("POST", "/api/v1/admin/users", body)
		if err != nil {
			return err
		}
		var u testenv.User
		if st != 201 || json.Unmarshal(raw, &u) != nil || u.Token == "" {
			return fmt.Errorf("create user: status %d %s", st, raw)
		}
		out[i] = &testenv.Client{Base: s.APIURL, Token: u.Token}
		return nil
	})
	if err != nil {
		t.Fatalf("create buyers: %v", err)
	}
	return out
}

// parallel runs f(0) … f(n-1) on at most workers goroutines and returns the
// errors (the first five, joined).
func parallel(n, workers int, f func(i int) error) error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	next := make(chan int)
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if len(errs) > 5 {
		errs = append(errs[:5], fmt.Errorf("… and %d more", len(errs)-5))
	}
	return errors.Join(errs...)
}

// ---- the ledger, read raw ----

// ordersByNo reads every order of the stack's ledger.
func ordersByNo(t testing.TB, s *testenv.Stack) map[string]model.Order {
	t.Helper()
	out := map[string]model.Order{}
	for _, o := range testenv.Rows[model.Order](t, s, `SELECT * FROM orders`) {
		out[o.OrderNo] = o
	}
	return out
}

// orderEvents reads every order's event history, oldest first.
func orderEvents(t testing.TB, s *testenv.Stack) map[string][]model.Event {
	t.Helper()
	out := map[string][]model.Event{}
	for _, e := range testenv.Rows[model.Event](t, s, `SELECT * FROM events WHERE object_type = 'order' ORDER BY id`) {
		out[e.ObjectNo] = append(out[e.ObjectNo], e)
	}
	return out
}

// path renders an event history as "-→pending,pending→closed,…".
func path(evs []model.Event) string {
	parts := make([]string, len(evs))
	for i, e := range evs {
		parts[i] = e.FromStatus + "→" + e.ToStatus
	}
	return strings.Join(parts, ",")
}

// cardKey is one row of card_keys.
type cardKey struct {
	ID        int64
	ProductID int64
	Code      string
	Status    model.CardStatus
	OrderID   *int64
}

func cardKeys(t testing.TB, s *testenv.Stack) []cardKey {
	t.Helper()
	return testenv.Rows[cardKey](t, s, `SELECT id, product_id, code, status, order_id FROM card_keys ORDER BY id`)
}

// stockFlow is one row of stock_flows.
type stockFlow struct {
	ProductID int64
	OrderID   int64
	FlowType  model.FlowKind
	Quantity  int
}

// flowsByOrder maps an order ID to its stock-flow types.
func flowsByOrder(t testing.TB, s *testenv.Stack) map[int64][]model.FlowKind {
	t.Helper()
	out := map[int64][]model.FlowKind{}
	for _, f := range testenv.Rows[stockFlow](t, s, `SELECT product_id, order_id, flow_type, quantity FROM stock_flows ORDER BY id`) {
		out[f.OrderID] = append(out[f.OrderID], f.FlowType)
	}
	return out
}

func paymentsOf(t testing.TB, s *testenv.Stack) []model.Payment {
	t.Helper()
	return testenv.Rows[model.Payment](t, s, `SELECT * FROM payments ORDER BY id`)
}

func refundsOf(t testing.TB, s *testenv.Stack) []model.Refund {
	t.Helper()
	return testenv.Rows[model.Refund](t, s, `SELECT * FROM refunds ORDER BY id`)
}

// paymentsByOrder maps an order ID to its payments, oldest first.
func paymentsByOrder(t testing.TB, s *testenv.Stack) map[int64][]model.Payment {
	t.Helper()
	return groupByOrder(paymentsOf(t, s), func(p model.Payment) int64 { return p.OrderID })
}

// refundsByOrder maps an order ID to its refunds, oldest first.
func refundsByOrder(t testing.TB, s *testenv.Stack) map[int64][]model.Refund {
	t.Helper()
	return groupByOrder(refundsOf(t, s), func(r model.Refund) int64 { return r.OrderID })
}

func groupByOrder[T any](rows []T, orderID func(T) int64) map[int64][]T {
	out := map[int64][]T{}
	for _, r := range rows {
		out[orderID(r)] = append(out[orderID(r)], r)
	}
	return out
}

// effectCounts maps an order ID to how many delivery effects it has.
func effectCounts(t testing.TB, s *testenv.Stack) map[int64]int {
	t.Helper()
	rows := testenv.Rows[struct {
		OrderID int64
		N       int
	}](t, s, `SELECT order_id, COUNT(*) AS n FROM order_effects GROUP BY order_id`)
	out := map[int64]int{}
	for _, r := range rows {
		out[r.OrderID] = r.N
	}
	return out
}

// statusCounts is the number of orders per status name.
func statusCounts(t testing.TB, s *testenv.Stack) map[string]int64 {
	t.Helper()
	rows := testenv.Rows[struct {
		Status model.OrderStatus
		N      int64
	}](t, s, `SELECT status, COUNT(*) AS n FROM orders GROUP BY status`)
	out := map[string]int64{}
	for _, r := range rows {
		out[r.Status.String()] = r.N
	}
	return out
}

// sellable is the ledger's stock of a card product: UNSOLD + RECYCLED keys.
func sellable(t testing.TB, s *testenv.Stack, productID int64) int64 {
	t.Helper()
	return s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE product_id = ? AND status IN ('UNSOLD', 'RECYCLED')`, productID)
}

// counter reads a product's Redis stock counter; ok is false when missing.
func counter(s *testenv.Stack, productID int64) (int64, bool, error) {
	return stock.NewCounter(s.SC.Redis).Get(context.Background(), productID)
}

// waitCountersMatch polls until every product's Redis counter equals the
// ledger's count of UNSOLD + RECYCLED keys.
func waitCountersMatch(t testing.TB, s *testenv.Stack, within time.Duration, productIDs ...int64) {
	t.Helper()
	testenv.Eventually(t, within, "stock counters equal to the ledger", func() (bool, error) {
		var diffs []string
		for _, id := range productIDs {
			n, ok, err := counter(s, id)
			if err != nil {
				return false, err
			}
			db := sellable(t, s, id)
			if !ok || n != db {
				diffs = append(diffs, fmt.Sprintf("product %d: redis %d (present %v), ledger %d", id, n, ok, db))
			}
		}
		if len(diffs) > 0 {
			return false, errors.New(strings.Join(diffs, "; "))
		}
		return true, nil
	})
}

// spread summarizes durations: n, min, median, p90, max.
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "n=0"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[int(q*float64(len(s)-1))].Round(time.Millisecond / 10) }
	return fmt.Sprintf("n=%d min=%v p50=%v p90=%v max=%v", len(s), at(0), at(0.5), at(0.9), at(1))
}

// ceilSecond is the first whole second at or after t: asynq schedules in
// whole seconds, so that is when an order's close task becomes due.
func ceilSecond(t time.Time) time.Time {
	c := t.Truncate(time.Second)
	if c.Before(t) {
		c = c.Add(time.Second)
	}
	return c
}

// waitIdle polls until the outbox is empty and no queue but the periodic one
// holds a task that is pending, running or waiting for a retry; scheduled
// tasks count too, except in the close queue, where every order's close sits
// until its expiry even after the order was paid or cancelled.
func waitIdle(t testing.TB, s *testenv.Stack, within time.Duration) {
	t.Helper()
	testenv.Eventually(t, within, "outbox and queues idle", func() (bool, error) {
		if n := s.Count(t, `SELECT COUNT(*) FROM outbox`); n > 0 {
			return false, fmt.Errorf("%d outbox rows", n)
		}
		queues, err := s.SC.Inspector.Queues()
		if err != nil {
			return false, err
		}
		for _, q := range queues {
			if q == tasks.QueueLow {
				continue
			}
			info, err := s.SC.Inspector.GetQueueInfo(q)
			if err != nil {
				return false, err
			}
			busy := info.Pending + info.Active + info.Retry
			if q != tasks.QueueClose {
				busy += info.Scheduled
			}
			if busy > 0 {
				return false, fmt.Errorf("queue %s: %d pending, %d active, %d retry, %d scheduled", q, info.Pending, info.Active, info.Retry, info.Scheduled)
			}
		}
		return true, nil
	})
}
