package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"orderflow/internal/infra/sign"
	"orderflow/internal/infra/stock"
	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/google/go-cmp/cmp"
)

// ledgerTables are counted before and after a batch of refused requests.
var ledgerTables = []string{
	"orders", "payments", "events", "wallet_entries", "outbox", "order_effects", "refunds",
	"users", "products", "card_keys", "stock_flows", "idempotency_keys", "notifications", "held_payments",
}

// ledgerState is everything a refused request must leave alone.
type ledgerState struct {
	Rows     map[string]int64
	Orders   map[string]string // order_no → status/attempts/gen/trade
	Users    map[int64]string  // id → balance/pending/subscription
	Keys     map[string]int64  // card key status → count
	Counters map[int64]string  // product → Redis stock counter
}

func snapshotLedger(t *testing.T, s *testenv.Stack, products ...int64) ledgerState {
	t.Helper()
	st := ledgerState{Rows: map[string]int64{}, Orders: map[string]string{}, Users: map[int64]string{}, Keys: map[string]int64{}, Counters: map[int64]string{}}
	for _, table := range ledgerTables {
		st.Rows[table] = s.Count(t, "SELECT COUNT(*) FROM "+table)
	}
	orders := testenv.Rows[model.Order](t, s, `SELECT * FROM orders`)
	for _, o := range orders {
		trade := "-"
		if o.TradeNo != nil {
			trade = *o.TradeNo
		}
		st.Orders[o.OrderNo] = fmt.Sprintf("%s attempts=%d gen=%d trade=%s", o.Status, o.Attempts, o.ActivateGen, trade)
	}
	users := testenv.Rows[model.User](t, s, `SELECT * FROM users`)
	for _, u := range users {
		sub := "-"
		if u.SubscriptionExpiresAt != nil {
			sub = u.SubscriptionExpiresAt.Format(time.RFC3339Nano)
		}
		st.Users[u.ID] = fmt.Sprintf("balance=%d pending=%d sub=%s", u.BalanceCents, u.PendingOrders, sub)
	}
	var keys []struct {
		Status string
		N      int64
	}
	if err := s.SC.DB.Raw(`SELECT status, COUNT(*) AS n FROM card_keys GROUP BY status`).Scan(&keys).Error; err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		st.Keys[k.Status] = k.N
	}
	for _, p := range products {
		n, ok, err := stock.NewCounter(s.SC.Redis).Get(context.Background(), p)
		st.Counters[p] = fmt.Sprintf("%d present=%v err=%v", n, ok, err)
	}
	return st
}

// errorBody is the API's error shape.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// checkError asserts an answer is the API's error shape with a code (and the
// given code, when not empty).
func checkError(t *testing.T, raw []byte, code string) errorBody {
	t.Helper()
	var eb errorBody
	if err := json.Unmarshal(raw, &eb); err != nil {
		t.Errorf("error body %q is not JSON: %v", raw, err)
		return eb
	}
	if eb.Error.Code == "" || eb.Error.Message == "" {
		t.Errorf("error body %s lacks error.code or error.message", raw)
	}
	if code != "" && eb.Error.Code != code {
		t.Errorf("error code = %q, want %q (body %s)", eb.Error.Code, code, raw)
	}
	return eb
}

// badRequest is one refused request and the answer it must get; code ""
// accepts any non-empty error code.
type badRequest struct {
	name    string
	method  string
	path    string
	token   string
	body    []byte
	headers []string
	want    int
	code    string
}

// TestBadInputChangesNothing is done-when 7: unsigned, mis-signed and
// malformed notifications, unknown orders and products, bad quantities,
// malformed bodies, another buyer's user_id or token, and missing or wrong
// admin tokens each get the right 4xx with an error code — and none of them
// changes the ledger (rows, statuses, balances, keys) or the stock counters.
func TestBadInputChangesNothing(t *testing.T) {
	s := testenv.Start(t, testenv.Options{})
	ctx := context.Background()
	card := s.NewProduct(t, map[string]any{"sku": "bad-card", "kind": "card", "price_cents": 250})
	s.AddCards(t, card, "BAD", 10)
	topup := s.NewProduct(t, map[string]any{"sku": "bad-topup", "kind": "recharge", "price_cents": 500, "credit_cents": 500})
	alice, ac := s.NewUser(t, "alice", 1000)
	bob, bc := s.NewUser(t, "bob", 1000)

	pending := ac.CreateOrder(t, card, 1)
	done := ac.CreateOrder(t, topup, 1)
	if _, st, err := s.Pay.Pay(ctx, done.OrderNo, done.AmountCents, ""); err != nil || st != 200 {
		t.Fatalf("pay: %d %v", st, err)
	}
	s.WaitStatus(t, done.OrderNo, model.OrderFinished, 10*time.Second)
	s.WaitQueuesIdle(t, 10*time.Second)
	testenv.Eventually(t, 10*time.Second, "outbox drained", func() (bool, error) {
		return s.Count(t, `SELECT COUNT(*) FROM outbox`) == 0, nil
	})
	ac.Order(t, done.OrderNo) // now cached: bob's read below must not be served from it
	before := snapshotLedger(t, s, card)

	payBody := func(orderNo, trade string, amount int64) []byte {
		b, _ := json.Marshal(map[string]any{"order_no": orderNo, "trade_no": trade, "amount_cents": amount})
		return b
	}
	good := payBody(pending.OrderNo, "T-BAD-1", pending.AmountCents)
	create := func(fields map[string]any) []byte {
		b, _ := json.Marshal(fields)
		return b
	}
	const (
		notify = "/api/v1/payments/notify"
		orders = "/api/v1/orders"
	)
	wrongAdmin := s.Config.AdminToken + "x"

	cases := []badRequest{
		// Payment notifications.
		{name: "notify unsigned", method: "POST", path: notify, body: good, want: 401, code: "bad_signature"},
		{name: "notify signed with another secret", method: "POST", path: notify, body: good,
			headers: []string{sign.Header, sign.Sum("not-the-secret", good)}, want: 401, code: "bad_signature"},
		{name: "notify body changed after signing", method: "POST", path: notify, body: payBody(pending.OrderNo, "T-BAD-1", 1),
			headers: []string{sign.Header, s.Sign(good)}, want: 401, code: "bad_signature"},
		{name: "notify signature not hex", method: "POST", path: notify, body: good,
			headers: []string{sign.Header, "zz-not-hex"}, want: 401, code: "bad_signature"},
		{name: "notify malformed JSON, valid signature", method: "POST", path: notify, body: []byte(`{"order_no":`),
			headers: []string{sign.Header, s.Sign([]byte(`{"order_no":`))}, want: 400},
		{name: "notify without trade_no", method: "POST", path: notify, body: payBody(pending.OrderNo, "", pending.AmountCents),
			headers: []string{sign.Header, s.Sign(payBody(pending.OrderNo, "", pending.AmountCents))}, want: 400},
		{name: "notify zero amount", method: "POST", path: notify, body: payBody(pending.OrderNo, "T-BAD-0", 0),
			headers: []string{sign.Header, s.Sign(payBody(pending.OrderNo, "T-BAD-0", 0))}, want: 400},
		{name: "notify unknown order", method: "POST", path: notify, body: payBody("O000000nosuchorder", "T-BAD-2", 250),
			headers: []string{sign.Header, s.Sign(payBody("O000000nosuchorder", "T-BAD-2", 250))}, want: 404},

		// Order creation.
		{name: "create negative quantity", method: "POST", path: orders, token: ac.Token,
			body: create(map[string]any{"product_id": card, "quantity": -1}), want: 400, code: "invalid_quantity"},
		{name: "create zero quantity", method: "POST", path: orders, token: ac.Token,
			body: create(map[string]any{"product_id": card, "quantity": 0}), want: 400, code: "invalid_quantity"},
		{name: "create missing quantity", method: "POST", path: orders, token: ac.Token,
			body: create(map[string]any{"product_id": card}), want: 400, code: "invalid_quantity"},
		{name: "create quantity over 100", method: "POST", path: orders, token: ac.Token,
			body: create(map[string]any{"product_id": topup, "quantity": 101}), want: 400, code: "invalid_quantity"},
		{name: "create quantity as a string", method: "POST", path: orders, token: ac.Token,
			body: []byte(`{"product_id": 1, "quantity": "2"}`), want: 400},
		{name: "create fractional quantity", method: "POST", path: orders, token: ac.Token,
			body: []byte(`{"product_id": 1, "quantity": 1.5}`), want: 400},
		{name: "create unknown product", method: "POST", path: orders, token: ac.Token,
			body: create(map[string]any{"product_id": 987654, "quantity": 1}), want: 404},
		{name: "create without product", method: "POST", path: orders, token: ac.Token,
			body: create(map[string]any{"quantity": 1}), want: 400},
		{name: "create malformed JSON", method: "POST", path: orders, token: ac.Token,
			body: []byte(`{"product_id": `), want: 400},
		{name: "create empty body", method: "POST", path: orders, token: ac.Token, want: 400},
		{name: "create JSON array", method: "POST", path: orders, token: ac.Token, body: []byte(`[]`), want: 400},
		{name: "create for another buyer's user_id", method: "POST", path: orders, token: ac.Token,
			body: create(map[string]any{"user_id": bob.ID, "product_id": card, "quantity": 1}), want: 403},
		{name: "create without a token", method: "POST", path: orders,
			body: create(map[string]any{"product_id": card, "quantity": 1}), want: 401},
		{name: "create with an unknown token", method: "POST", path: orders, token: "u_nobody",
			body: create(map[string]any{"product_id": card, "quantity": 1}), want: 401},

		// Reading and cancelling orders.
		{name: "another buyer reads a pending order", method: "GET", path: orders + "/" + pending.OrderNo, token: bc.Token, want: 404, code: "order_not_found"},
		{name: "another buyer reads a cached finished order", method: "GET", path: orders + "/" + done.OrderNo, token: bc.Token, want: 404, code: "order_not_found"},
		{name: "read without a token", method: "GET", path: orders + "/" + pending.OrderNo, want: 401},
		{name: "read with a wrong admin token", method: "GET", path: orders + "/" + pending.OrderNo, token: wrongAdmin, want: 401},
		{name: "another buyer cancels an order", method: "POST", path: orders + "/" + pending.OrderNo + "/cancel", token: bc.Token, want: 404, code: "order_not_found"},
		{name: "cancel without a token", method: "POST", path: orders + "/" + pending.OrderNo + "/cancel", want: 401},
	}
	// Every admin endpoint refuses no token, a wrong admin token and a buyer's token.
	for _, ep := range []struct {
		method, path string
		body         []byte
	}{
		{"POST", "/api/v1/admin/users", create(map[string]any{"name": "mallory", "balance_cents": 1_000_000})},
		{"GET", fmt.Sprintf("/api/v1/admin/users/%d", alice.ID), nil},
		{"POST", "/api/v1/admin/products", create(map[string]any{"sku": "evil", "kind": "recharge", "price_cents": 0, "credit_cents": 99999})},
		{"POST", fmt.Sprintf("/api/v1/admin/products/%d/cards", card), create(map[string]any{"codes": []string{"EVIL-1"}})},
		{"GET", fmt.Sprintf("/api/v1/admin/products/%d", card), nil},
		{"GET", "/api/v1/admin/orders", nil},
		{"GET", "/api/v1/admin/orders/" + pending.OrderNo, nil},
		{"POST", "/api/v1/admin/orders/" + done.OrderNo + "/retry", nil},
		{"POST", "/api/v1/admin/orders/" + done.OrderNo + "/refund", nil},
		{"GET", "/api/v1/admin/refunds", nil},
		{"GET", "/api/v1/admin/stats", nil},
	} {
		for _, who := range []struct{ name, token string }{{"no token", ""}, {"wrong admin token", wrongAdmin}, {"buyer token", ac.Token}} {
			cases = append(cases, badRequest{name: ep.method + " " + ep.path + " with " + who.name, method: ep.method, path: ep.path, token: who.token, body: ep.body, want: 401})
		}
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &testenv.Client{Base: s.APIURL, Token: tc.token}
			st, raw := c.Raw(t, tc.method, tc.path, tc.body, tc.headers...)
			if st != tc.want {
				t.Errorf("status = %d, want %d (body %s)", st, tc.want, raw)
			}
			if st >= 400 {
				checkError(t, raw, tc.code)
			}
		})
	}

	// Another buyer's order looks exactly like a missing one.
	_, theirs := bc.Raw(t, "GET", orders+"/"+pending.OrderNo, nil)
	_, missing := bc.Raw(t, "GET", orders+"/O000000nosuchorder", nil)
	if string(theirs) != string(missing) {
		t.Errorf("another buyer's order answers %s, a missing one %s: the difference reveals it exists", theirs, missing)
	}

	after := snapshotLedger(t, s, card)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("refused requests changed the ledger (-before +after):\n%s", diff)
	}

	// Controls: the same requests with the right credentials do work, so the
	// refusals above were about the input, not a broken route.
	if v := ac.Order(t, pending.OrderNo); v.Status != "pending" {
		t.Errorf("owner reads pending order: status %s", v.Status)
	}
	if st := s.Admin.Do(t, "GET", orders+"/"+pending.OrderNo, nil, nil); st != 200 {
		t.Errorf("admin token on the buyer endpoint: status %d, want 200", st)
	}
	if st, raw, err := s.Notify(good, s.Sign(good)); err != nil || st != 200 {
		t.Errorf("correctly signed notify: status %d body %s err %v", st, raw, err)
	}
	s.WaitStatus(t, pending.OrderNo, model.OrderFinished, 10*time.Second)
}

// TestPendingCap: a buyer's sixth unpaid order is refused with 429
// too_many_pending, taking no stock; paying one frees a slot.
func TestPendingCap(t *testing.T) {
	s := testenv.Start(t, testenv.Options{})
	ctx := context.Background()
	card := s.NewCardProduct(t, "cap-card", 100, 10)
	carol, cc := s.NewUser(t, "carol", 0)
	max := s.Config.MaxPending
	if max != 5 {
		t.Fatalf("default max_pending = %d, want 5", max)
	}
	var first testenv.OrderView
	for i := range max {
		o := cc.CreateOrder(t, card, 1)
		if i == 0 {
			first = o
		}
	}
	body, _ := json.Marshal(map[string]any{"product_id": card, "quantity": 1})
	st, raw := cc.Raw(t, "POST", "/api/v1/orders", body)
	if st != http.StatusTooManyRequests {
		t.Fatalf("order #%d: status %d body %s, want 429", max+1, st, raw)
	}
	checkError(t, raw, "too_many_pending")

	if n := s.Count(t, `SELECT COUNT(*) FROM orders WHERE user_id = ?`, carol.ID); n != int64(max) {
		t.Errorf("carol's orders = %d, want %d", n, max)
	}
	if n := s.Count(t, `SELECT pending_orders FROM users WHERE id = ?`, carol.ID); n != int64(max) {
		t.Errorf("pending_orders = %d, want %d", n, max)
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE status = 'LOCKED'`); n != int64(max) {
		t.Errorf("LOCKED keys = %d, want %d (the refused order took none)", n, max)
	}
	if n, ok, err := stock.NewCounter(s.SC.Redis).Get(ctx, card); err != nil || !ok || n != int64(10-max) {
		t.Errorf("Redis stock counter = %d (present %v err %v), want %d (the refused take given back)", n, ok, err, 10-max)
	}

	// Paying one order frees its slot at once.
	if _, st, err := s.Pay.Pay(ctx, first.OrderNo, first.AmountCents, ""); err != nil || st != 200 {
		t.Fatalf("pay: %d %v", st, err)
	}
	cc.CreateOrder(t, card, 1)
	st, raw = cc.Raw(t, "POST", "/api/v1/orders", body)
	if st != http.StatusTooManyRequests {
		t.Errorf("order beyond the cap after one was paid: status %d body %s, want 429", st, raw)
	}
}

// burstCreate sends n creates with the same body and Idempotency-Key at once
// and returns each answer's status and order number.
func burstCreate(c *testenv.Client, n int, body []byte, key string) (statuses []int, orderNos []string, errs []error) {
	statuses, orderNos, errs = make([]int, n), make([]string, n), make([]error, n)
	testenv.AtOnce(n, func(i int) {
		st, raw, err := c.Send("POST", "/api/v1/orders", body, "Idempotency-Key", key)
		var res struct {
			OrderNo string `json:"order_no"`
		}
		if err == nil && st < 300 {
			err = json.Unmarshal(raw, &res)
		}
		if err == nil && st >= 300 {
			err = fmt.Errorf("answer %s", raw)
		}
		statuses[i], orderNos[i], errs[i] = st, res.OrderNo, err
	})
	return statuses, orderNos, errs
}

// checkBurst asserts a same-key burst produced one order: every answer 200 or
// 201 with the same order_no, exactly one 201, and one order row for the buyer.
func checkBurst(t *testing.T, s *testenv.Stack, userID int64, statuses []int, orderNos []string, errs []error) {
	t.Helper()
	var the string // the order the burst made
	for _, no := range orderNos {
		if no != "" {
			the = no
			break
		}
	}
	created := 0
	for i := range statuses {
		if errs[i] != nil || (statuses[i] != 200 && statuses[i] != 201) || orderNos[i] != the {
			t.Errorf("retry #%d: status %d order %q err %v; want 200/201 and the one order %q", i, statuses[i], orderNos[i], errs[i], the)
		}
		if statuses[i] == 201 {
			created++
		}
	}
	if created != 1 {
		t.Errorf("%d answers were 201, want exactly 1", created)
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM orders WHERE user_id = ? AND status = ?`, userID, model.OrderPending); n < 1 {
		t.Errorf("buyer %d has no pending order after the burst", userID)
	}
}

// TestIdempotencyKey: a retried create with the same Idempotency-Key returns
// the first order (200, same order_no, no new order, no stock taken) — also
// when the retries race each other, and also when there is stock or a
// pending slot for only that one order; the key is scoped to the buyer.
func TestIdempotencyKey(t *testing.T) {
	s := testenv.Start(t, testenv.Options{})
	ctx := context.Background()
	card := s.NewCardProduct(t, "idem-card", 100, 40)
	dave, dc := s.NewUser(t, "dave", 0)
	erin, ec := s.NewUser(t, "erin", 0)
	frank, fc := s.NewUser(t, "frank", 0)
	body, _ := json.Marshal(map[string]any{"product_id": card, "quantity": 2})

	createWith := func(c *testenv.Client, key string) (int, string) {
		t.Helper()
		var res struct {
			OrderNo string `json:"order_no"`
		}
		st, raw := c.Raw(t, "POST", "/api/v1/orders", body, "Idempotency-Key", key)
		if json.Unmarshal(raw, &res) != nil {
			t.Fatalf("create: status %d body %s", st, raw)
		}
		return st, res.OrderNo
	}

	st1, first := createWith(dc, "key-1")
	st2, again := createWith(dc, "key-1")
	if st1 != 201 || st2 != 200 || first == "" || again != first {
		t.Errorf("same key twice: (%d, %s) then (%d, %s); want 201 then 200 with the same order", st1, first, st2, again)
	}
	st3, erins := createWith(ec, "key-1")
	if st3 != 201 || erins == first {
		t.Errorf("another buyer with the same key: %d %s; want 201 and a different order than %s", st3, erins, first)
	}
	st4, other := createWith(dc, "key-2")
	if st4 != 201 || other == first {
		t.Errorf("dave with a new key: %d %s; want 201 and a new order", st4, other)
	}

	// Eight concurrent retries with plenty of stock: one order, one 201.
	statuses, nos, errs := burstCreate(fc, 8, body, "burst")
	checkBurst(t, s, frank.ID, statuses, nos, errs)

	for _, c := range []struct {
		id   int64
		want int64
	}{{dave.ID, 2}, {erin.ID, 1}, {frank.ID, 1}} {
		if n := s.Count(t, `SELECT COUNT(*) FROM orders WHERE user_id = ?`, c.id); n != c.want {
			t.Errorf("user %d has %d orders, want %d", c.id, n, c.want)
		}
		if n := s.Count(t, `SELECT pending_orders FROM users WHERE id = ?`, c.id); n != c.want {
			t.Errorf("user %d pending_orders = %d, want %d", c.id, n, c.want)
		}
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE status = 'LOCKED'`); n != 4*2 {
		t.Errorf("LOCKED keys = %d, want 8 (four orders of two)", n)
	}
	if n, ok, err := stock.NewCounter(s.SC.Redis).Get(ctx, card); err != nil || !ok || n != 40-8 {
		t.Errorf("Redis stock counter = %d (present %v err %v), want 32", n, ok, err)
	}

	// Once paid, the retry still answers with the same order, now paid.
	o := s.OrderRow(t, first)
	if _, st, err := s.Pay.Pay(ctx, first, o.AmountCents, ""); err != nil || st != 200 {
		t.Fatalf("pay: %d %v", st, err)
	}
	var res struct {
		OrderNo string `json:"order_no"`
		Status  string `json:"status"`
	}
	st, raw := dc.Raw(t, "POST", "/api/v1/orders", body, "Idempotency-Key", "key-1")
	if json.Unmarshal(raw, &res) != nil || st != 200 || res.OrderNo != first || res.Status == "pending" {
		t.Errorf("retry after payment: status %d body %s; want 200, order %s, not pending", st, raw, first)
	}
	// Once delivered, it answers the order finished (and the answer keeps to
	// the document, which the contract client checks).
	s.WaitStatus(t, first, model.OrderFinished, 10*time.Second)
	st, raw = dc.Raw(t, "POST", "/api/v1/orders", body, "Idempotency-Key", "key-1")
	if json.Unmarshal(raw, &res) != nil || st != 200 || res.OrderNo != first || res.Status != "finished" {
		t.Errorf("retry after delivery: status %d body %s; want 200, order %s, finished", st, raw, first)
	}

	// Retries that race while only one order's worth of stock is left must
	// still all get that order, not 409 out_of_stock.
	t.Run("concurrent retries, stock for one order", func(t *testing.T) {
		last := s.NewCardProduct(t, "idem-last", 100, 2)
		gina, gc := s.NewUser(t, "gina", 0)
		b, _ := json.Marshal(map[string]any{"product_id": last, "quantity": 2})
		statuses, nos, errs := burstCreate(gc, 8, b, "last-two")
		checkBurst(t, s, gina.ID, statuses, nos, errs)
	})

	// Retries that race while the buyer has one pending slot left must still
	// all get the order that took it, not 429 too_many_pending.
	t.Run("concurrent retries, one pending slot left", func(t *testing.T) {
		hank, hc := s.NewUser(t, "hank", 0)
		for range s.Config.MaxPending - 1 {
			hc.CreateOrder(t, card, 1)
		}
		statuses, nos, errs := burstCreate(hc, 8, body, "last-slot")
		checkBurst(t, s, hank.ID, statuses, nos, errs)
		if n := s.Count(t, `SELECT COUNT(*) FROM orders WHERE user_id = ?`, hank.ID); n != int64(s.Config.MaxPending) {
			t.Errorf("hank has %d orders, want %d", n, s.Config.MaxPending)
		}
	})
}
