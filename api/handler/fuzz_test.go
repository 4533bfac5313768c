package handler_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"orderflow/api/handler"
	"orderflow/internal/infra/sign"
	"orderflow/internal/testenv"
)

// fuzzRoute is one endpoint the fuzzer drives with an arbitrary body (and,
// for {x} routes, an arbitrary path value): who calls it, and whether the
// body is signed as the payment provider signs it, so the fuzzed bytes get
// past the signature check and reach the decoder and the use case.
type fuzzRoute struct {
	method, path string
	bearer       string // "buyer", "admin" or "" (a provider callback)
	signed       bool
}

var fuzzRoutes = []fuzzRoute{
	{"POST", "/api/v1/orders", "buyer", false},
	{"GET", "/api/v1/orders/{x}", "buyer", false},
	{"POST", "/api/v1/orders/{x}/cancel", "buyer", false},
	{"POST", "/api/v1/groups", "buyer", false},
	{"POST", "/api/v1/groups/{x}/join", "buyer", false},
	{"GET", "/api/v1/groups/{x}", "buyer", false},
	{"POST", "/api/v1/payments/notify", "", true},
	{"POST", "/api/v1/payments/refund-notify", "", true},
	{"POST", "/api/v1/admin/users", "admin", false},
	{"GET", "/api/v1/admin/users/{x}", "admin", false},
	{"POST", "/api/v1/admin/products", "admin", false},
	{"POST", "/api/v1/admin/products/{x}/cards", "admin", false},
	{"GET", "/api/v1/admin/orders/{x}", "admin", false},
	{"GET", "/api/v1/admin/orders?status={x}", "admin", false},
	{"POST", "/api/v1/admin/orders/{x}/retry", "admin", false},
	{"POST", "/api/v1/admin/refunds/{x}/resolve", "admin", false},
	{"POST", "/api/v1/admin/groups/{x}/retry", "admin", false},
}

// fuzzTarget is the API's router on a real stack (its own database and
// Redis DB), called in-process so each input costs no network round trip.
type fuzzTarget struct {
	router http.Handler
	tokens map[string]string
	secret string
}

func newFuzzTarget(f *testing.F) (*fuzzTarget, *testenv.Stack) {
	s := testenv.Start(f, testenv.Options{NoWorker: true})
	_, buyer := s.NewUser(f, "fuzz-buyer", 100000)
	return &fuzzTarget{
		router: handler.NewRouter(s.SC, s.UC),
		tokens: map[string]string{"buyer": buyer.Token, "admin": s.Config.AdminToken},
		secret: s.Config.PaySecret,
	}, s
}

// serve sends one request and fails the input on a 5xx: bad input is a 4xx.
func (ft *fuzzTarget) serve(t *testing.T, rt fuzzRoute, pathValue string, body []byte) {
	path := strings.ReplaceAll(rt.path, "{x}", url.PathEscape(pathValue))
	if strings.Contains(rt.path, "?") {
		path = strings.ReplaceAll(rt.path, "{x}", url.QueryEscape(pathValue))
	}
	req := httptest.NewRequest(rt.method, path, bytes.NewReader(body))
	if tok := ft.tokens[rt.bearer]; tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if rt.signed {
		req.Header.Set(sign.Header, sign.Sum(ft.secret, body))
	}
	rec := httptest.NewRecorder()
	ft.router.ServeHTTP(rec, req)
	if rec.Code >= 500 {
		t.Fatalf("%s %s with body %q: status %d %s — bad input must be a 4xx", rt.method, path, body, rec.Code, rec.Body.String())
	}
}

// FuzzRequestBodies feeds arbitrary bodies and path values to every
// endpoint that takes them: no input yields a 5xx or a panic. `go test`
// runs the seeds; `make fuzz` runs the fuzzer for a fixed time.
func FuzzRequestBodies(f *testing.F) {
	ft, s := newFuzzTarget(f)
	card := s.NewProduct(f, map[string]any{"sku": "fuzz-card", "kind": "card", "price_cents": 100})
	s.AddCards(f, card, "FUZZ", 5)
	seeds := []string{
		`{"product_id":1,"quantity":1}`, `{"product_id":1,"quantity":1e400}`, `{"product_id":-1}`,
		`{"title":"t","price_cents":100,"deadline":"2030-01-01T00:00:00Z"}`, `{"deadline":"9999-12-31T23:59:59Z"}`,
		`{"order_no":"O1","trade_no":"T1","amount_cents":100}`, `{"amount_cents":9223372036854775807}`,
		`{"out_request_no":"RF1","status":"succeeded"}`, `{"name":"n","balance_cents":-1}`,
		`{"sku":"s","kind":"subscription","price_cents":1,"days":2147483648}`,
		`{"sku":"s2","kind":"recharge","price_cents":1,"credit_cents":4611686018427387904}`,
		`{"codes":["A","A"]}`, `{"codes":[""]}`, `[]`, `null`, `{`, "\xff\xfe", `{"user_id":"x"}`,
	}
	paths := []string{"O1", "1", "-1", "99999999999999999999", "\xff", "%", "pending", strings.Repeat("x", 300)}
	for i := range fuzzRoutes {
		for j, b := range seeds {
			f.Add(uint8(i), paths[(i+j)%len(paths)], []byte(b))
		}
	}
	f.Fuzz(func(t *testing.T, route uint8, pathValue string, body []byte) {
		ft.serve(t, fuzzRoutes[int(route)%len(fuzzRoutes)], pathValue, body)
	})
}

// FuzzPaymentNotify sends correctly signed payment notifications with
// arbitrary fields against a real pending order and arbitrary numbers: every
// answer is a 2xx (recorded) or a 4xx (refused), never a 5xx or a panic.
func FuzzPaymentNotify(f *testing.F) {
	ft, s := newFuzzTarget(f)
	topup := s.NewProduct(f, map[string]any{"sku": "fuzz-topup", "kind": "recharge", "price_cents": 100, "credit_cents": 100})
	buyer := &testenv.Client{Base: s.APIURL, Token: ft.tokens["buyer"]}
	var pending []string
	for range 3 {
		pending = append(pending, buyer.CreateOrder(f, topup, 1).OrderNo)
	}
	for i, no := range append(pending, "O-unknown", "", "\xff") {
		f.Add(no, "T-seed", int64(100))
		f.Add(no, strings.Repeat("t", 65), int64(100*i))
		f.Add(no, "T-seed-2", int64(-1))
		f.Add(no, "", int64(9223372036854775807))
	}
	notify := fuzzRoute{"POST", "/api/v1/payments/notify", "", true}
	f.Fuzz(func(t *testing.T, orderNo, tradeNo string, amount int64) {
		// Marshal cannot fail here: strings that are not UTF-8 are coerced.
		body, _ := json.Marshal(map[string]any{"order_no": orderNo, "trade_no": tradeNo, "amount_cents": amount})
		ft.serve(t, notify, "", body)
	})
}
