package contract_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"orderflow/api/openapi"
	"orderflow/internal/testenv/contract"
)

// fakeAPI answers every request with status and body, as a drifted handler would.
func fakeAPI(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestTransport: one exchange per rule, the right one passing and each kind
// of drift failing with a Violation that names what broke.
func TestTransport(t *testing.T) {
	v, err := contract.New(openapi.Document)
	if err != nil {
		t.Fatal(err)
	}
	const user = `{"id":7,"name":"ann","balance_cents":100,"subscription_expires_at":null}`
	cases := []struct {
		name         string
		method, path string
		token        string
		body         string
		status       int
		answer       string
		wantErr      string // "" = no violation
	}{
		{name: "a documented answer", method: "GET", path: "/api/v1/admin/users/7", token: "admin",
			status: 200, answer: user},
		{name: "a field of the wrong type", method: "GET", path: "/api/v1/admin/users/7", token: "admin",
			status: 200, answer: strings.Replace(user, `"balance_cents":100`, `"balance_cents":"100"`, 1), wantErr: "balance_cents"},
		{name: "a renamed field", method: "GET", path: "/api/v1/admin/users/7", token: "admin",
			status: 200, answer: strings.Replace(user, `"name"`, `"username"`, 1), wantErr: "username"},
		{name: "a required field missing", method: "GET", path: "/api/v1/admin/users/7", token: "admin",
			status: 200, answer: `{"id":7,"name":"ann","balance_cents":100}`, wantErr: "subscription_expires_at"},
		{name: "an undocumented status", method: "GET", path: "/api/v1/admin/users/7", token: "admin",
			status: 418, answer: `{"error":{"code":"teapot","message":"short and stout"}}`, wantErr: "status is not supported"},
		{name: "an error body of another shape", method: "GET", path: "/api/v1/admin/users/7", token: "admin",
			status: 404, answer: `{"error":"user_not_found"}`, wantErr: "error"},
		{name: "an undocumented endpoint that answers", method: "GET", path: "/api/v1/admin/secrets", token: "admin",
			status: 200, answer: `{}`, wantErr: "not in the OpenAPI document"},
		{name: "an undocumented endpoint refused 404", method: "GET", path: "/api/v1/admin/secrets", token: "admin",
			status: 404, answer: `{"error":{"code":"not_found","message":"no such endpoint"}}`},
		{name: "a request without its token, refused", method: "POST", path: "/api/v1/orders",
			body: `{"product_id":1,"quantity":1}`, status: 401, answer: `{"error":{"code":"unauthorized","message":"no"}}`},
		{name: "a request without its token, accepted", method: "POST", path: "/api/v1/orders",
			body: `{"product_id":1,"quantity":1}`, status: 201,
			answer: `{"order_no":"O1","status":"pending","amount_cents":1,"expire_at":"2030-01-01T00:00:00Z"}`, wantErr: "must be refused"},
		{name: "a body outside its schema, accepted", method: "POST", path: "/api/v1/orders", token: "u_ann",
			body: `{"product_id":1,"quantity":101}`, status: 201,
			answer: `{"order_no":"O1","status":"pending","amount_cents":1,"expire_at":"2030-01-01T00:00:00Z"}`, wantErr: "quantity"},
		{name: "a body outside its schema, refused", method: "POST", path: "/api/v1/orders", token: "u_ann",
			body: `{"product_id":1,"quantity":101}`, status: 400, answer: `{"error":{"code":"invalid_quantity","message":"no"}}`},
		{name: "a nullable field null", method: "GET", path: "/api/v1/admin/products/3", token: "admin",
			status: 200, answer: `{"id":3,"sku":"s","kind":"recharge","price_cents":5,"credit_cents":5,"stock":null}`},
		{name: "an enum value unknown", method: "GET", path: "/api/v1/admin/products/3", token: "admin",
			status: 200, answer: `{"id":3,"sku":"s","kind":"gift","price_cents":5,"stock":null}`, wantErr: "kind"},
		{name: "an exempt page", method: "GET", path: "/monitoring/api/queues", status: 200, answer: `whatever`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var reported []*contract.Violation
			c := &http.Client{Transport: &contract.Transport{Validator: v, Report: func(x *contract.Violation) { reported = append(reported, x) }}}
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req, err := http.NewRequest(tc.method, fakeAPI(t, tc.status, tc.answer)+tc.path, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := c.Do(req)
			if resp != nil {
				resp.Body.Close()
			}
			if tc.wantErr == "" {
				if err != nil || len(reported) != 0 {
					t.Fatalf("want no violation, got %v (reported %d)", err, len(reported))
				}
				return
			}
			var viol *contract.Violation
			if !errors.As(err, &viol) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want a violation naming %q, got %v", tc.wantErr, err)
			}
			if len(reported) != 1 || reported[0] != viol {
				t.Errorf("reported %v, want the returned violation once", reported)
			}
			t.Log(err)
		})
	}
}
