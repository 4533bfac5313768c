package httpapi

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"orderflow/internal/infra/failpoint"
	"orderflow/internal/infra/sign"
	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/google/go-cmp/cmp"
	"github.com/hibiken/asynq"
)

// The arithmetic: values whose products wrap int64 or time.Duration.
const (
	maxCents     = int64(1_000_000_000_000)   // 10^12
	wrapPrice    = int64(6148914691236517206) // × 3 wraps to 2
	hugePrice    = int64(1_000_000_000_000_000_000)
	hugeCredit   = int64(1) << 62 // × 2 wraps to math.MinInt64
	bigDays      = int64(1) << 31 // over the INT column
	maxStock     = int64(1_000_000_000)
	int64Max     = int64(9223372036854775807)
	overInt64    = "99999999999999999999" // a JSON number no int64 holds
	futureFormat = time.RFC3339Nano
)

// boundsLedger is snapshotLedger plus the group tables.
type boundsLedger struct {
	Ledger       ledgerState
	Groups       int64
	Participants int64
}

func snapshotBounds(t *testing.T, s *testenv.Stack, products ...int64) boundsLedger {
	t.Helper()
	return boundsLedger{
		Ledger:       snapshotLedger(t, s, products...),
		Groups:       s.Count(t, "SELECT COUNT(*) FROM `groups`"),
		Participants: s.Count(t, `SELECT COUNT(*) FROM group_participants`),
	}
}

func jsonBody(t *testing.T, v map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// with returns a copy of base with the given fields replaced.
func with(base map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(base)+len(kv)/2)
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// rawNum is a JSON number written as-is (beyond what float64 or int64 hold).
type rawNum string

func (n rawNum) MarshalJSON() ([]byte, error) { return []byte(n), nil }

// TestBodyFieldBounds is done-when 1 of issue 14: every request body field of
// the API at its bound (accepted), just over, far over and of the wrong JSON
// type — each refusal a 4xx naming the field, and none of them changing the
// ledger or the stock counters. It includes the arithmetic: price ×
// quantity, credit × quantity and days × quantity over their bounds are
// refused at create before any stock is taken, for products made through the
// API at their bounds and for products planted in the database with the
// issue's wrapping values.
func TestBodyFieldBounds(t *testing.T) {
	s := testenv.Start(t, testenv.Options{})
	ctx := t.Context()

	// Products at their bounds, through the API.
	dearCard := s.NewCardProduct(t, "b-dear-card", maxCents, 5)
	bigTopup := s.NewProduct(t, map[string]any{"sku": "b-big-topup", "kind": "recharge", "price_cents": 1, "credit_cents": maxCents, "stock": 1000})
	century := s.NewProduct(t, map[string]any{"sku": "b-century", "kind": "subscription", "price_cents": 1, "days": 36500})
	longPlan := s.NewProduct(t, map[string]any{"sku": "b-1100", "kind": "subscription", "price_cents": 1, "days": 1100, "stock": 1000})
	cheap := s.NewProduct(t, map[string]any{"sku": "b-cheap", "kind": "recharge", "price_cents": 1, "credit_cents": 1})

	// Products planted in the ledger with the values (written before
	// the bounds existed, or by hand).
	plant := func(sku, kind string, price, credit, days int64, stock any) int64 {
		t.Helper()
		if err := s.SC.DB.Exec(`INSERT INTO products (sku, kind, price_cents, days, credit_cents, stock, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			sku, kind, price, days, credit, stock, time.Now().UTC()).Error; err != nil {
			t.Fatal(err)
		}
		return s.Count(t, `SELECT id FROM products WHERE sku = ?`, sku)
	}
	wrapCard := plant("p-wrap-card", "card", wrapPrice, 0, 0, nil)
	s.AddCards(t, wrapCard, "WRAP", 5)
	hugeCard := plant("p-huge-card", "card", hugePrice, 0, 0, nil)
	s.AddCards(t, hugeCard, "HUGE", 12)
	hugeTopup := plant("p-huge-topup", "recharge", 100, hugeCredit, 0, int64(1000))
	intMaxPlan := plant("p-intmax-plan", "subscription", 100, 0, int64(1)<<31-1, int64(1000))
	negPrice := plant("p-neg-price", "recharge", -5, 10, 0, nil)

	newBuyer := func(name string) *testenv.Client {
		_, c := s.NewUser(t, name, 0)
		return c
	}
	alice := newBuyer("alice")
	bob, bc := s.NewUser(t, "bob", 0)
	const (
		users    = "/api/v1/admin/users"
		products = "/api/v1/admin/products"
		orders   = "/api/v1/orders"
		groups   = "/api/v1/groups"
		notify   = "/api/v1/payments/notify"
		refundCb = "/api/v1/payments/refund-notify"
	)
	cards := fmt.Sprintf("/api/v1/admin/products/%d/cards", dearCard)
	admin := s.Config.AdminToken
	deadline := time.Now().Add(time.Hour).UTC().Format(futureFormat)

	// At the bound: accepted.
	accepted := []struct {
		name        string
		path, token string
		body        []byte
		headers     []string
		want        int
	}{
		{name: "user name of 128 bytes", path: users, token: admin, body: jsonBody(t, map[string]any{"name": strings.Repeat("n", 128), "balance_cents": 0}), want: 201},
		{name: "user balance 10^12", path: users, token: admin, body: jsonBody(t, map[string]any{"name": "rich", "balance_cents": maxCents}), want: 201},
		{name: "product sku of 64 bytes, price 0", path: products, token: admin, body: jsonBody(t, map[string]any{"sku": strings.Repeat("s", 64), "kind": "card", "price_cents": 0}), want: 201},
		{name: "product price 10^12", path: products, token: admin, body: jsonBody(t, map[string]any{"sku": "at-price", "kind": "card", "price_cents": maxCents}), want: 201},
		{name: "product days 36500", path: products, token: admin, body: jsonBody(t, map[string]any{"sku": "at-days", "kind": "subscription", "price_cents": 1, "days": 36500}), want: 201},
		{name: "product credit 10^12", path: products, token: admin, body: jsonBody(t, map[string]any{"sku": "at-credit", "kind": "recharge", "price_cents": 1, "credit_cents": maxCents}), want: 201},
		{name: "product stock 10^9", path: products, token: admin, body: jsonBody(t, map[string]any{"sku": "at-stock", "kind": "recharge", "price_cents": 1, "credit_cents": 1, "stock": maxStock}), want: 201},
		{name: "card code of 255 bytes", path: cards, token: admin, body: jsonBody(t, map[string]any{"codes": []string{strings.Repeat("c", 255)}}), want: 201},
		{name: "order quantity 100", path: orders, token: newBuyer("q100").Token, body: jsonBody(t, map[string]any{"product_id": cheap, "quantity": 100}), want: 201},
		{name: "order amount 10^12 (price 10^12 × 1)", path: orders, token: newBuyer("dear").Token, body: jsonBody(t, map[string]any{"product_id": dearCard, "quantity": 1}), want: 201},
		{name: "order credit 10^12 (credit 10^12 × 1)", path: orders, token: newBuyer("topup").Token, body: jsonBody(t, map[string]any{"product_id": bigTopup, "quantity": 1}), want: 201},
		{name: "order days 36500 (36500 × 1)", path: orders, token: newBuyer("century").Token, body: jsonBody(t, map[string]any{"product_id": century, "quantity": 1}), want: 201},
		{name: "order days 36300 (1100 × 33)", path: orders, token: newBuyer("plan33").Token, body: jsonBody(t, map[string]any{"product_id": longPlan, "quantity": 33}), want: 201},
		{name: "group title of 255 bytes, price 10^12", path: groups, token: alice.Token, body: jsonBody(t, map[string]any{"title": strings.Repeat("t", 255), "price_cents": maxCents, "deadline": deadline}), want: 201},
		{name: "group deadline a year ahead", path: groups, token: alice.Token, body: jsonBody(t, map[string]any{"title": "year", "price_cents": 1, "deadline": time.Now().Add(364 * 24 * time.Hour).UTC().Format(futureFormat)}), want: 201},
	}
	for _, tc := range accepted {
		t.Run("at bound/"+tc.name, func(t *testing.T) {
			c := &testenv.Client{Base: s.APIURL, Token: tc.token}
			if st, raw := c.Raw(t, "POST", tc.path, tc.body, tc.headers...); st != tc.want {
				t.Errorf("status = %d, want %d (body %s)", st, tc.want, raw)
			}
		})
	}

	// A group to join, an order to pay: the notify and join cases name them.
	var g struct {
		GroupNo string `json:"group_no"`
	}
	if st := alice.Do(t, "POST", groups, map[string]any{"title": "join me", "price_cents": 100, "deadline": deadline}, &g); st != 201 {
		t.Fatalf("create group: %d", st)
	}
	join := groups + "/" + g.GroupNo + "/join"
	if st, raw := bc.Raw(t, "POST", join, jsonBody(t, map[string]any{"user_id": bob.ID})); st != 200 {
		t.Errorf("join with own user_id: status %d body %s", st, raw)
	}
	pending := alice.CreateOrder(t, cheap, 1)
	dear := newBuyer("dear2").CreateOrder(t, dearCard, 1)
	// Payment at the bounds: amount 10^12, a trade number of 64 bytes.
	payAt := jsonBody(t, map[string]any{"order_no": dear.OrderNo, "trade_no": strings.Repeat("T", 64), "amount_cents": maxCents})
	if st, raw, err := s.Notify(payAt, s.Sign(payAt)); err != nil || st != 200 {
		t.Fatalf("notify at the bounds: %d %s %v", st, raw, err)
	}
	s.WaitStatus(t, dear.OrderNo, model.OrderFinished, 10*time.Second)
	s.WaitQueuesIdle(t, 10*time.Second)
	testenv.Eventually(t, 10*time.Second, "outbox drained", func() (bool, error) {
		return s.Count(t, `SELECT COUNT(*) FROM outbox`) == 0, nil
	})

	buyer := newBuyer("carol").Token
	limited := []int64{dearCard, bigTopup, longPlan, wrapCard, hugeCard, hugeTopup, intMaxPlan}
	before := snapshotBounds(t, s, limited...)

	user := map[string]any{"name": "mallory", "balance_cents": 0}
	product := map[string]any{"sku": "bad", "kind": "recharge", "price_cents": 1, "credit_cents": 1}
	sub := map[string]any{"sku": "bad-sub", "kind": "subscription", "price_cents": 1, "days": 1}
	order := map[string]any{"product_id": cheap, "quantity": 1}
	group := map[string]any{"title": "g", "price_cents": 1, "deadline": deadline}
	pay := map[string]any{"order_no": pending.OrderNo, "trade_no": "T-BOUND", "amount_cents": pending.AmountCents}
	refund := map[string]any{"out_request_no": "RFnosuchrefund", "status": "succeeded"}
	tooManyCodes := make([]string, 10001)
	for i := range tooManyCodes {
		tooManyCodes[i] = fmt.Sprintf("MANY-%05d", i)
	}

	type refusal struct {
		name, path, token string
		body              map[string]any
		raw               []byte // sent as-is instead of body
		signed            bool
		want              int
		code              string
	}
	cases := []refusal{
		// POST /api/v1/admin/users
		{name: "user name empty", path: users, token: admin, body: with(user, "name", ""), want: 400, code: "invalid_name"},
		{name: "user name 129 bytes", path: users, token: admin, body: with(user, "name", strings.Repeat("n", 129)), want: 400, code: "invalid_name"},
		{name: "user name a number", path: users, token: admin, body: with(user, "name", 5), want: 400, code: "invalid_name"},
		{name: "user balance 10^12+1", path: users, token: admin, body: with(user, "balance_cents", maxCents+1), want: 400, code: "invalid_balance"},
		{name: "user balance max int64", path: users, token: admin, body: with(user, "balance_cents", int64Max), want: 400, code: "invalid_balance"},
		{name: "user balance beyond int64", path: users, token: admin, body: with(user, "balance_cents", rawNum(overInt64)), want: 400, code: "invalid_balance"},
		{name: "user balance negative", path: users, token: admin, body: with(user, "balance_cents", -1), want: 400, code: "invalid_balance"},
		{name: "user balance a string", path: users, token: admin, body: with(user, "balance_cents", "100"), want: 400, code: "invalid_balance"},
		{name: "user balance fractional", path: users, token: admin, body: with(user, "balance_cents", 1.5), want: 400, code: "invalid_balance"},

		// POST /api/v1/admin/products
		{name: "product sku 65 bytes", path: products, token: admin, body: with(product, "sku", strings.Repeat("s", 65)), want: 400, code: "invalid_sku"},
		{name: "product sku a number", path: products, token: admin, body: with(product, "sku", 5), want: 400, code: "invalid_sku"},
		{name: "product kind unknown", path: products, token: admin, body: with(product, "kind", "gift"), want: 400, code: "invalid_kind"},
		{name: "product kind a number", path: products, token: admin, body: with(product, "kind", 1), want: 400, code: "invalid_kind"},
		{name: "product price negative", path: products, token: admin, body: with(product, "price_cents", -1), want: 400, code: "invalid_price"},
		{name: "product price 10^12+1", path: products, token: admin, body: with(product, "price_cents", maxCents+1), want: 400, code: "invalid_price"},
		{name: "product price 6148914691236517206", path: products, token: admin, body: with(product, "price_cents", wrapPrice), want: 400, code: "invalid_price"},
		{name: "product price beyond int64", path: products, token: admin, body: with(product, "price_cents", rawNum(overInt64)), want: 400, code: "invalid_price"},
		{name: "product price a string", path: products, token: admin, body: with(product, "price_cents", "1"), want: 400, code: "invalid_price"},
		{name: "product days 0", path: products, token: admin, body: with(sub, "days", 0), want: 400, code: "invalid_days"},
		{name: "product days 36501", path: products, token: admin, body: with(sub, "days", 36501), want: 400, code: "invalid_days"},
		{name: "product days 2^31", path: products, token: admin, body: with(sub, "days", bigDays), want: 400, code: "invalid_days"},
		{name: "product days beyond int64", path: products, token: admin, body: with(sub, "days", rawNum(overInt64)), want: 400, code: "invalid_days"},
		{name: "product days a string", path: products, token: admin, body: with(sub, "days", "30"), want: 400, code: "invalid_days"},
		{name: "product credit 0", path: products, token: admin, body: with(product, "credit_cents", 0), want: 400, code: "invalid_credit"},
		{name: "product credit 10^12+1", path: products, token: admin, body: with(product, "credit_cents", maxCents+1), want: 400, code: "invalid_credit"},
		{name: "product credit 2^62", path: products, token: admin, body: with(product, "credit_cents", hugeCredit), want: 400, code: "invalid_credit"},
		{name: "product credit a string", path: products, token: admin, body: with(product, "credit_cents", "1"), want: 400, code: "invalid_credit"},
		{name: "product stock negative", path: products, token: admin, body: with(product, "stock", -1), want: 400, code: "invalid_stock"},
		{name: "product stock 10^9+1", path: products, token: admin, body: with(product, "stock", maxStock+1), want: 400, code: "invalid_stock"},
		{name: "product stock max int64", path: products, token: admin, body: with(product, "stock", int64Max), want: 400, code: "invalid_stock"},
		{name: "product stock a string", path: products, token: admin, body: with(product, "stock", "5"), want: 400, code: "invalid_stock"},
		{name: "card product with a stock", path: products, token: admin, body: map[string]any{"sku": "c", "kind": "card", "price_cents": 1, "stock": 5}, want: 400, code: "invalid_stock"},

		// POST /api/v1/admin/products/{id}/cards
		{name: "card code 256 bytes", path: cards, token: admin, body: map[string]any{"codes": []string{strings.Repeat("c", 256)}}, want: 400, code: "invalid_codes"},
		{name: "card codes empty", path: cards, token: admin, body: map[string]any{"codes": []string{}}, want: 400, code: "invalid_codes"},
		{name: "card codes 10001", path: cards, token: admin, body: map[string]any{"codes": tooManyCodes}, want: 400, code: "invalid_codes"},
		{name: "card codes a string", path: cards, token: admin, body: map[string]any{"codes": "ABC"}, want: 400, code: "invalid_codes"},
		{name: "card code a number", path: cards, token: admin, body: map[string]any{"codes": []any{"OK-1", 5}}, want: 400, code: "invalid_codes"},

		// POST /api/v1/orders
		{name: "order quantity 101", path: orders, token: buyer, body: with(order, "quantity", 101), want: 400, code: "invalid_quantity"},
		{name: "order quantity 2^31", path: orders, token: buyer, body: with(order, "quantity", bigDays), want: 400, code: "invalid_quantity"},
		{name: "order quantity beyond int64", path: orders, token: buyer, body: with(order, "quantity", rawNum(overInt64)), want: 400, code: "invalid_quantity"},
		{name: "order quantity a string", path: orders, token: buyer, body: with(order, "quantity", "1"), want: 400, code: "invalid_quantity"},
		{name: "order product_id a string", path: orders, token: buyer, body: with(order, "product_id", "1"), want: 400, code: "invalid_product"},
		{name: "order product_id 0", path: orders, token: buyer, body: with(order, "product_id", 0), want: 400, code: "invalid_product"},
		{name: "order user_id a string", path: orders, token: buyer, body: with(order, "user_id", "1"), want: 400, code: "invalid_user_id"},
		{name: "order amount 10^12 × 2", path: orders, token: buyer, body: with(order, "product_id", dearCard, "quantity", 2), want: 400, code: "invalid_amount"},
		{name: "order credit 10^12 × 2", path: orders, token: buyer, body: with(order, "product_id", bigTopup, "quantity", 2), want: 400, code: "invalid_credit"},
		{name: "order days 36500 × 2", path: orders, token: buyer, body: with(order, "product_id", century, "quantity", 2), want: 400, code: "invalid_days"},
		{name: "order days 1100 × 100", path: orders, token: buyer, body: with(order, "product_id", longPlan, "quantity", 100), want: 400, code: "invalid_days"},
		{name: "order days 1100 × 34", path: orders, token: buyer, body: with(order, "product_id", longPlan, "quantity", 34), want: 400, code: "invalid_days"},
		{name: "planted price 6148914691236517206 × 3", path: orders, token: buyer, body: with(order, "product_id", wrapCard, "quantity", 3), want: 400, code: "invalid_price"},
		{name: "planted price 10^18 × 10", path: orders, token: buyer, body: with(order, "product_id", hugeCard, "quantity", 10), want: 400, code: "invalid_price"},
		{name: "planted credit 2^62 × 2", path: orders, token: buyer, body: with(order, "product_id", hugeTopup, "quantity", 2), want: 400, code: "invalid_credit"},
		{name: "planted days 2^31-1 × 1", path: orders, token: buyer, body: with(order, "product_id", intMaxPlan, "quantity", 1), want: 400, code: "invalid_days"},
		{name: "planted negative price", path: orders, token: buyer, body: with(order, "product_id", negPrice, "quantity", 1), want: 400, code: "invalid_price"},

		// POST /api/v1/groups
		{name: "group title empty", path: groups, token: buyer, body: with(group, "title", ""), want: 400, code: "invalid_title"},
		{name: "group title 256 bytes", path: groups, token: buyer, body: with(group, "title", strings.Repeat("t", 256)), want: 400, code: "invalid_title"},
		{name: "group title a number", path: groups, token: buyer, body: with(group, "title", 5), want: 400, code: "invalid_title"},
		{name: "group price 0", path: groups, token: buyer, body: with(group, "price_cents", 0), want: 400, code: "invalid_price"},
		{name: "group price 10^12+1", path: groups, token: buyer, body: with(group, "price_cents", maxCents+1), want: 400, code: "invalid_price"},
		{name: "group price max int64", path: groups, token: buyer, body: with(group, "price_cents", int64Max), want: 400, code: "invalid_price"},
		{name: "group price a string", path: groups, token: buyer, body: with(group, "price_cents", "1"), want: 400, code: "invalid_price"},
		{name: "group deadline past", path: groups, token: buyer, body: with(group, "deadline", time.Now().Add(-time.Minute).UTC().Format(futureFormat)), want: 400, code: "invalid_deadline"},
		{name: "group deadline 366 days ahead", path: groups, token: buyer, body: with(group, "deadline", time.Now().Add(366*24*time.Hour).UTC().Format(futureFormat)), want: 400, code: "invalid_deadline"},
		{name: "group deadline year 9999", path: groups, token: buyer, body: with(group, "deadline", "9999-12-31T23:59:59Z"), want: 400, code: "invalid_deadline"},
		{name: "group deadline not a time", path: groups, token: buyer, body: with(group, "deadline", "tomorrow"), want: 400, code: "invalid_deadline"},
		{name: "group deadline a number", path: groups, token: buyer, body: with(group, "deadline", 1700000000), want: 400, code: "invalid_deadline"},
		{name: "group user_id a string", path: groups, token: buyer, body: with(group, "user_id", "x"), want: 400, code: "invalid_user_id"},

		// POST /api/v1/groups/{group_no}/join
		{name: "join user_id a string", path: join, token: buyer, body: map[string]any{"user_id": "x"}, want: 400, code: "invalid_user_id"},
		{name: "join user_id of another", path: join, token: buyer, body: map[string]any{"user_id": bob.ID}, want: 403},
		{name: "join body not JSON", path: join, token: buyer, raw: []byte(`{"user_id":`), want: 400, code: "invalid_json"},

		// POST /api/v1/payments/notify (correctly signed)
		{name: "notify order_no a number", path: notify, signed: true, body: with(pay, "order_no", 5), want: 400, code: "invalid_order_no"},
		{name: "notify order_no empty", path: notify, signed: true, body: with(pay, "order_no", ""), want: 400, code: "invalid_order_no"},
		{name: "notify trade_no 65 bytes", path: notify, signed: true, body: with(pay, "trade_no", strings.Repeat("T", 65)), want: 400, code: "invalid_trade_no"},
		{name: "notify trade_no a number", path: notify, signed: true, body: with(pay, "trade_no", 5), want: 400, code: "invalid_trade_no"},
		{name: "notify amount 0", path: notify, signed: true, body: with(pay, "amount_cents", 0), want: 400, code: "invalid_amount"},
		{name: "notify amount 10^12+1", path: notify, signed: true, body: with(pay, "amount_cents", maxCents+1), want: 400, code: "invalid_amount"},
		{name: "notify amount max int64", path: notify, signed: true, body: with(pay, "amount_cents", int64Max), want: 400, code: "invalid_amount"},
		{name: "notify amount beyond int64", path: notify, signed: true, body: with(pay, "amount_cents", rawNum(overInt64)), want: 400, code: "invalid_amount"},
		{name: "notify amount a string", path: notify, signed: true, body: with(pay, "amount_cents", "1"), want: 400, code: "invalid_amount"},

		// POST /api/v1/payments/refund-notify (correctly signed)
		{name: "refund-notify out_request_no a number", path: refundCb, signed: true, body: with(refund, "out_request_no", 5), want: 400, code: "invalid_refund_notify"},
		{name: "refund-notify status a number", path: refundCb, signed: true, body: with(refund, "status", 5), want: 400, code: "invalid_refund_notify"},
		{name: "refund-notify out_request_no empty", path: refundCb, signed: true, body: with(refund, "out_request_no", ""), want: 400, code: "invalid_refund_notify"},
		{name: "refund-notify unknown refund", path: refundCb, signed: true, body: refund, want: 404, code: "refund_not_found"},
	}
	for _, tc := range cases {
		t.Run("refused/"+tc.name, func(t *testing.T) {
			body := tc.raw
			if body == nil {
				body = jsonBody(t, tc.body)
			}
			var headers []string
			if tc.signed {
				headers = []string{sign.Header, s.Sign(body)}
			}
			c := &testenv.Client{Base: s.APIURL, Token: tc.token}
			st, raw := c.Raw(t, "POST", tc.path, body, headers...)
			if st != tc.want {
				t.Errorf("status = %d, want %d (body %.300s)", st, tc.want, raw)
			}
			if st >= 400 {
				checkError(t, raw, tc.code)
			}
		})
	}

	// Let anything a wrongly accepted request queued run before reading back.
	s.WaitQueuesIdle(t, 10*time.Second)
	after := snapshotBounds(t, s, limited...)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("refused requests changed the ledger (-before +after):\n%s", diff)
	}
	_ = ctx
}

// plantedOrder is an order written straight into the ledger, bypassing the
// API and its bounds, waiting for a payment (or, failed, an operator retry).
type plantedOrder struct {
	no       string
	userID   int64
	product  int64
	kind     string
	qty      int
	amount   int64
	status   model.OrderStatus
	tradeNo  any
	wantCode string // the bound its delivery must be refused with
}

// wrapped is a × b as unchecked int64 arithmetic did it.
func wrapped(a, b int64) int64 { return a * b }

func plantOrder(t *testing.T, s *testenv.Stack, o plantedOrder) {
	t.Helper()
	now := time.Now().UTC()
	db := s.SC.DB
	if err := db.Exec(`INSERT INTO orders (order_no, user_id, product_id, kind, quantity, amount_cents, status, trade_no, created_at, updated_at, expire_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.no, o.userID, o.product, o.kind, o.qty, o.amount, o.status, o.tradeNo, now, now, now.Add(time.Hour)).Error; err != nil {
		t.Fatal(err)
	}
	id := s.Count(t, `SELECT id FROM orders WHERE order_no = ?`, o.no)
	if o.status == model.OrderPending {
		if err := db.Exec(`UPDATE users SET pending_orders = pending_orders + 1 WHERE id = ?`, o.userID).Error; err != nil {
			t.Fatal(err)
		}
	}
	if o.kind == "card" {
		res := db.Exec(`UPDATE card_keys SET status = 'LOCKED', order_id = ? WHERE product_id = ? AND status = 'UNSOLD' ORDER BY id LIMIT ?`, id, o.product, o.qty)
		if res.Error != nil || res.RowsAffected != int64(o.qty) {
			t.Fatalf("lock %d keys for %s: %d locked, %v", o.qty, o.no, res.RowsAffected, res.Error)
		}
	}
	if err := db.Exec(`INSERT INTO stock_flows (product_id, order_id, flow_type, quantity, created_at) VALUES (?, ?, 1, ?, ?)`, o.product, id, o.qty, now).Error; err != nil {
		t.Fatal(err)
	}
}

// userState is what a refused delivery must leave alone for one buyer.
type userState struct {
	Balance      int64
	Subscription string
	Entries      int64
}

func readUser(t *testing.T, s *testenv.Stack, id int64) userState {
	t.Helper()
	u, err := s.SC.Store.UserByID(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	sub := "-"
	if u.SubscriptionExpiresAt != nil {
		sub = u.SubscriptionExpiresAt.UTC().Format(time.RFC3339Nano)
	}
	return userState{u.BalanceCents, sub, s.Count(t, `SELECT COUNT(*) FROM wallet_entries WHERE user_id = ?`, id)}
}

// TestPlantedRowsRefusedAtDelivery: orders and products written straight into
// the database with values the API now refuses (prices, credits and days
// whose product with the quantity wraps int64 or time.Duration, a wallet
// near the int64 limit, a subscription near the end of DATETIME) are refused
// at delivery: the order ends failed at its first attempt (no retries) with
// the bound in its event history, the admin is notified, and no effect,
// wallet entry, balance, subscription or card key moves.
func TestPlantedRowsRefusedAtDelivery(t *testing.T) {
	s := testenv.Start(t, testenv.Options{})
	ctx := t.Context()
	plant := func(sku, kind string, price, credit, days int64) int64 {
		t.Helper()
		if err := s.SC.DB.Exec(`INSERT INTO products (sku, kind, price_cents, days, credit_cents, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			sku, kind, price, days, credit, time.Now().UTC()).Error; err != nil {
			t.Fatal(err)
		}
		return s.Count(t, `SELECT id FROM products WHERE sku = ?`, sku)
	}
	wrapCard := plant("d-wrap-card", "card", wrapPrice, 0, 0)
	s.AddCards(t, wrapCard, "DWRAP", 3)
	hugeCard := plant("d-huge-card", "card", hugePrice, 0, 0)
	s.AddCards(t, hugeCard, "DHUGE", 10)
	hugeTopup := plant("d-huge-topup", "recharge", 100, hugeCredit, 0)
	longPlan := plant("d-1100", "subscription", 100, 0, 1100)
	topup := s.NewProduct(t, map[string]any{"sku": "d-topup", "kind": "recharge", "price_cents": 100, "credit_cents": 1000})
	year := s.NewProduct(t, map[string]any{"sku": "d-year", "kind": "subscription", "price_cents": 100, "days": 365})

	dana, _ := s.NewUser(t, "dana", 1000)
	erin, _ := s.NewUser(t, "erin", 0)
	fay, _ := s.NewUser(t, "fay", 0)
	subEnd := time.Now().UTC().Add(10 * 24 * time.Hour).Truncate(time.Millisecond)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE users SET subscription_expires_at = ? WHERE id = ?`, []any{subEnd, dana.ID}},
		{`UPDATE users SET balance_cents = ? WHERE id = ?`, []any{int64Max - 500, erin.ID}},
		{`UPDATE users SET subscription_expires_at = ? WHERE id = ?`, []any{time.Date(9999, 6, 1, 0, 0, 0, 0, time.UTC), fay.ID}},
	} {
		if err := s.SC.DB.Exec(q.sql, q.args...).Error; err != nil {
			t.Fatal(err)
		}
	}

	planted := []plantedOrder{
		// 6148914691236517206 × 3 wraps to 2: paying 2 cents must not deliver 3 keys.
		{no: "OPLANTwrapcard", userID: dana.ID, product: wrapCard, kind: "card", qty: 3, amount: 2, wantCode: "invalid_price"},
		// 2^62 × 2 wraps to math.MinInt64.
		{no: "OPLANThugetopup", userID: dana.ID, product: hugeTopup, kind: "recharge", qty: 2, amount: 200, wantCode: "invalid_credit"},
		// 1100 days × 100 wraps time.Duration (to 1743).
		{no: "OPLANTlongplan", userID: dana.ID, product: longPlan, kind: "subscription", qty: 100, amount: 10000, wantCode: "invalid_days"},
		// A valid credit onto a wallet that cannot hold it.
		{no: "OPLANTfullwallet", userID: erin.ID, product: topup, kind: "recharge", qty: 1, amount: 100, wantCode: "invalid_balance"},
		// A valid year onto a subscription ending in 9999.
		{no: "OPLANTlastyear", userID: fay.ID, product: year, kind: "subscription", qty: 1, amount: 100, wantCode: "invalid_days"},
		// 10^18 × 10 wraps negative: no payment can match it, so it was
		// planted failed for an operator to retry.
		{no: "OPLANThugecard", userID: dana.ID, product: hugeCard, kind: "card", qty: 10, amount: wrapped(hugePrice, 10), status: model.OrderFailed, tradeNo: "T-PLANT-HUGE", wantCode: "invalid_price"},
	}
	for i := range planted {
		if planted[i].status == 0 {
			planted[i].status = model.OrderPending
		}
		plantOrder(t, s, planted[i])
	}
	users := []int64{dana.ID, erin.ID, fay.ID}
	before := map[int64]userState{}
	for _, id := range users {
		before[id] = readUser(t, s, id)
	}
	keysBefore := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE status = 'LOCKED'`)

	for _, o := range planted {
		if o.status == model.OrderPending {
			if _, st, err := s.Pay.Pay(ctx, o.no, o.amount, ""); err != nil || st != 200 {
				t.Fatalf("pay %s: %d %v", o.no, st, err)
			}
			continue
		}
		if st, raw := s.Admin.Raw(t, "POST", "/api/v1/admin/orders/"+o.no+"/retry", nil); st != 200 {
			t.Fatalf("retry %s: %d %s", o.no, st, raw)
		}
	}
	for _, o := range planted {
		t.Run(o.no, func(t *testing.T) {
			var got *model.Order
			testenv.Eventually(t, 15*time.Second, o.no+" at rest", func() (bool, error) {
				got = s.OrderRow(t, o.no)
				return got.Status == model.OrderFailed || got.Status == model.OrderFinished, nil
			})
			if got.Status != model.OrderFailed {
				t.Fatalf("status = %s, want failed (moves %v)", got.Status, s.Moves(t, o.no))
			}
			if got.Attempts != 1 {
				t.Errorf("attempts = %d, want 1: a bound is permanent, retrying cannot help", got.Attempts)
			}
			events, err := s.SC.Store.EventsFor(ctx, "order", o.no)
			if err != nil {
				t.Fatal(err)
			}
			if last := events[len(events)-1]; last.ToStatus != "failed" || !strings.Contains(last.Reason, o.wantCode) {
				t.Errorf("last move %s→%s %q, want →failed naming %s", last.FromStatus, last.ToStatus, last.Reason, o.wantCode)
			}
			if n := s.Count(t, `SELECT COUNT(*) FROM notifications WHERE kind = 'order_failed' AND message LIKE ?`, "%"+o.no+"%"+o.wantCode+"%"); n != 1 {
				t.Errorf("admin notifications naming %s and %s = %d, want 1", o.no, o.wantCode, n)
			}
			id := s.Count(t, `SELECT id FROM orders WHERE order_no = ?`, o.no)
			if n := s.Count(t, `SELECT COUNT(*) FROM order_effects WHERE order_id = ?`, id); n != 0 {
				t.Errorf("%d effect rows, want 0", n)
			}
			if o.kind == "card" {
				if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE order_id = ? AND status = 'LOCKED'`, id); n != int64(o.qty) {
					t.Errorf("%d keys still LOCKED by the order, want %d (none sold)", n, o.qty)
				}
			}
		})
	}
	for _, id := range users {
		if got := readUser(t, s, id); got != before[id] {
			t.Errorf("user %d changed by refused deliveries: %+v, was %+v", id, got, before[id])
		}
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE status = 'LOCKED'`); n != keysBefore {
		t.Errorf("LOCKED keys = %d, want %d", n, keysBefore)
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE status = 'SOLD'`); n != 0 {
		t.Errorf("SOLD keys = %d, want 0", n)
	}
}

// TestFreeOrder: a price-0 product makes a free order — created, moved
// pending→paid ("free") in the create's transaction with no trade, and
// delivered with no payment notification. A payment notification for it is
// a mismatch (recorded, refunded, never delivered again). An operator refund
// of a failed free order returns no money: it goes refunding→refunded at
// once, its keys recycled, with no refund record. The audit finds the ledger
// consistent afterwards.
func TestFreeOrder(t *testing.T) {
	testenv.EachBackend(t, testFreeOrder)
}

func testFreeOrder(t *testing.T, backend testenv.Backend) {
	s := testenv.Start(t, testenv.Options{Backend: backend})
	ctx := t.Context()
	card := s.NewCardProduct(t, "free-card", 0, 3)
	trial := s.NewProduct(t, map[string]any{"sku": "free-trial", "kind": "subscription", "price_cents": 0, "days": 30})
	gina, gc := s.NewUser(t, "gina", 0)

	var created struct {
		OrderNo     string `json:"order_no"`
		Status      string `json:"status"`
		AmountCents int64  `json:"amount_cents"`
	}
	if st := gc.Do(t, "POST", "/api/v1/orders", map[string]any{"product_id": card, "quantity": 2}, &created); st != 201 {
		t.Fatalf("create free card order: status %d", st)
	}
	if created.AmountCents != 0 || created.Status != "paid" {
		t.Errorf("free order answered %+v, want amount 0 and status paid", created)
	}
	s.WaitStatus(t, created.OrderNo, model.OrderFinished, 10*time.Second)
	v := gc.Order(t, created.OrderNo)
	if len(v.Cards) != 2 || v.TradeNo != nil {
		t.Errorf("finished free order: cards %v trade %v; want 2 cards and no trade", v.Cards, v.TradeNo)
	}
	if got, want := s.Moves(t, created.OrderNo), []string{"-→pending", "pending→paid", "paid→claimed", "claimed→finished"}; !cmp.Equal(got, want) {
		t.Errorf("moves = %v, want %v", got, want)
	}
	if n := s.Count(t, `SELECT pending_orders FROM users WHERE id = ?`, gina.ID); n != 0 {
		t.Errorf("pending_orders = %d after a free order, want 0", n)
	}

	sub := gc.CreateOrder(t, trial, 1)
	s.WaitStatus(t, sub.OrderNo, model.OrderFinished, 10*time.Second)
	u, err := s.SC.Store.UserByID(ctx, gina.ID)
	if err != nil {
		t.Fatal(err)
	}
	if u.SubscriptionExpiresAt == nil || u.SubscriptionExpiresAt.Before(time.Now().Add(29*24*time.Hour)) {
		t.Errorf("subscription ends %v, want about 30 days from now", u.SubscriptionExpiresAt)
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM payments`); n != 0 {
		t.Errorf("%d payments recorded for free orders, want 0", n)
	}

	// A payment for a free order is a wrong amount: recorded, refunded, the
	// admin alerted, nothing delivered again.
	trade, st, err := s.Pay.Pay(ctx, created.OrderNo, 1, "")
	if err != nil || st != 200 {
		t.Fatalf("pay a free order: %d %v", st, err)
	}
	p, err := s.SC.Store.PaymentByTrade(ctx, "paysim", trade)
	if err != nil || p.Disposition != model.PaymentMismatch {
		t.Fatalf("payment for a free order: %+v %v, want disposition mismatch", p, err)
	}
	testenv.Eventually(t, 10*time.Second, "refund of the stray payment succeeded", func() (bool, error) {
		return s.Count(t, `SELECT COUNT(*) FROM refunds WHERE trade_no = ? AND status = ?`, trade, model.RefundSucceeded) == 1, nil
	})
	if o := s.OrderRow(t, created.OrderNo); o.Status != model.OrderFinished {
		t.Errorf("free order after a stray payment: %s, want finished", o.Status)
	}

	// A failed free order refunded by an operator.
	if err := failpoint.Enable(failpoint.ActivateDeliver, "error"); err != nil {
		t.Fatal(err)
	}
	failing := gc.CreateOrder(t, card, 1)
	s.WaitStatus(t, failing.OrderNo, model.OrderFailed, 20*time.Second)
	failpoint.Disable(failpoint.ActivateDeliver)
	var refunded struct {
		Status   string `json:"status"`
		RefundNo string `json:"refund_no"`
	}
	if st := s.Admin.Do(t, "POST", "/api/v1/admin/orders/"+failing.OrderNo+"/refund", nil, &refunded); st != 200 {
		t.Fatalf("operator refund of a failed free order: status %d", st)
	}
	if refunded.Status != "refunded" || refunded.RefundNo != "" {
		t.Errorf("operator refund answered %+v, want status refunded and no refund_no", refunded)
	}
	if o := s.OrderRow(t, failing.OrderNo); o.Status != model.OrderRefunded {
		t.Errorf("failed free order after the operator refund: %s, want refunded", o.Status)
	}
	id := s.Count(t, `SELECT id FROM orders WHERE order_no = ?`, failing.OrderNo)
	if n := s.Count(t, `SELECT COUNT(*) FROM refunds WHERE order_id = ?`, id); n != 0 {
		t.Errorf("%d refund records for a free order, want 0", n)
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE order_id = ? AND status = 'RECYCLED'`, id); n != 1 {
		t.Errorf("%d of its keys RECYCLED, want 1", n)
	}
	// A second refund is refused: the order is no longer failed.
	if st := s.Admin.Do(t, "POST", "/api/v1/admin/orders/"+failing.OrderNo+"/refund", nil, nil); st != 409 {
		t.Errorf("second operator refund: status %d, want 409", st)
	}

	s.WaitQueuesIdle(t, 10*time.Second)
	if backend == testenv.Shared {
		s.CheckAudit(t, "free orders")
	}
}

// TestPlantedGroupRefusedAtSettlement: a group written straight into the
// ledger with a price no wallet may be charged (negative: the "charge"
// would credit everyone) is never settled by an operator's retry: it stays
// FAILED and no balance or wallet entry moves.
func TestPlantedGroupRefusedAtSettlement(t *testing.T) {
	s := testenv.Start(t, testenv.Options{})
	hana, _ := s.NewUser(t, "hana", 1000)
	now := time.Now().UTC()
	if err := s.SC.DB.Exec("INSERT INTO `groups` (group_no, owner_user_id, title, price_cents, deadline, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		"GPLANTnegative", hana.ID, "planted", -500, now.Add(-time.Minute), model.GroupFailed, now, now).Error; err != nil {
		t.Fatal(err)
	}
	gid := s.Count(t, "SELECT id FROM `groups` WHERE group_no = ?", "GPLANTnegative")
	if err := s.SC.DB.Exec(`INSERT INTO group_participants (group_id, user_id, joined_at) VALUES (?, ?, ?)`, gid, hana.ID, now).Error; err != nil {
		t.Fatal(err)
	}
	before := readUser(t, s, hana.ID)
	if st, raw := s.Admin.Raw(t, "POST", "/api/v1/admin/groups/GPLANTnegative/retry", nil); st != 200 {
		t.Fatalf("retry: %d %s", st, raw)
	}
	queue := s.SC.Tasks[tasks.TypeGroupSettle].Queue
	taskID := tasks.ID(tasks.TypeGroupSettle, "GPLANTnegative", 2)
	var g *model.Group
	testenv.Eventually(t, 15*time.Second, "the settle task refused (archived) or the group settled", func() (bool, error) {
		var err error
		if g, err = s.SC.Store.GroupByNo(t.Context(), "GPLANTnegative"); err != nil || g.Status == model.GroupSettled {
			return err == nil, err
		}
		info, err := s.SC.Inspector.GetTaskInfo(queue, taskID)
		return err == nil && info.State == asynq.TaskStateArchived, nil
	})
	if g.Status != model.GroupFailed {
		t.Errorf("planted group %s, want FAILED", g.Status)
	}
	if got := readUser(t, s, hana.ID); got != before {
		t.Errorf("participant changed by the refused settlement: %+v, was %+v", got, before)
	}
}
