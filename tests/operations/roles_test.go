package operations

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"orderflow/api/handler"
	"orderflow/internal/infra/operators"
	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"
	"orderflow/svc"
)

const (
	viewerToken   = "roles-viewer-token-0001"
	operatorToken = "roles-operator-token-0001"
)

// startWithOperators is a monitored stack with, beside the admin token, a
// viewer named vera and an operator named otto (ORDERFLOW_ADMIN_TOKENS).
func startWithOperators(t *testing.T, configure func(*svc.Config)) *testenv.Stack {
	t.Helper()
	s := startMonitoredWith(t, testenv.Options{Configure: func(c *svc.Config) {
		c.AdminTokens = "vera:viewer:" + viewerToken + ",otto:operator:" + operatorToken
		if configure != nil {
			configure(c)
		}
	}})
	return s
}

func bearerAuth(token string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
}

// errorCode is an API error body's code ("" when the body is none).
func errorCode(body string) string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal([]byte(body), &e)
	return e.Error.Code
}

// concrete fills a route pattern's wildcards so it can be requested.
func concrete(pattern string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	for _, w := range []string{"{id}", "{order_no}", "{refund_no}", "{group_no}"} {
		path = strings.ReplaceAll(path, w, "1")
	}
	return method, path
}

// Every admin route the router mounts answers by role: a viewer reads and
// is refused every action with 403 forbidden; an operator acts but cannot
// create users, products or cards; the admin may do everything.
func TestAdminAPIByRole(t *testing.T) {
	s := startWithOperators(t, nil)
	routes := handler.AdminRoutes()
	if len(routes) < 10 {
		t.Fatalf("the router lists %d admin routes, want them all", len(routes))
	}
	// SPEC's rule, written out apart from the code under test.
	adminOnly := map[string]bool{
		"POST /api/v1/admin/users": true, "POST /api/v1/admin/products": true, "POST /api/v1/admin/products/{id}/cards": true,
	}
	var actions int
	for _, rt := range routes {
		method, path := concrete(rt.Pattern)
		if method != http.MethodGet {
			actions++
		}
		for _, who := range []struct{ name, token string }{{"viewer", viewerToken}, {"operator", operatorToken}, {"admin", s.Config.AdminToken}} {
			want := who.name == "viewer" && method != http.MethodGet || who.name != "admin" && adminOnly[rt.Pattern]
			r := send(t, method, s.APIURL+path, bearerAuth(who.token))
			refused := r.status == http.StatusForbidden && errorCode(r.body) == "forbidden"
			if refused != want || r.status == http.StatusUnauthorized {
				t.Errorf("%s as %s: %d %.200q; want refused with 403 forbidden: %v", rt.Pattern, who.name, r.status, r.body, want)
			}
		}
		if wantNeed := map[bool]operators.Role{true: operators.RoleAdmin, false: operators.NeedFor(method)}[adminOnly[rt.Pattern]]; rt.Need != wantNeed {
			t.Errorf("%s needs %s, want %s", rt.Pattern, rt.Need, wantNeed)
		}
	}
	if actions < 9 {
		t.Errorf("the router lists %d admin actions, want every admin POST", actions)
	}

	// A viewer's reads answer as the admin's do.
	for _, p := range []string{"/api/v1/admin/orders", "/api/v1/admin/refunds", "/api/v1/admin/stats", "/api/v1/admin/webhooks"} {
		if r := send(t, "GET", s.APIURL+p, bearerAuth(viewerToken)); r.status != http.StatusOK {
			t.Errorf("GET %s as viewer: %d %.200q, want 200", p, r.status, r.body)
		}
	}
	// A viewer cannot cancel a buyer's order through the order routes either.
	if r := send(t, "POST", s.APIURL+"/api/v1/orders/1/cancel", bearerAuth(viewerToken)); r.status != http.StatusForbidden || errorCode(r.body) != "forbidden" {
		t.Errorf("cancel as viewer: %d %.200q, want 403 forbidden", r.status, r.body)
	}
}

// /monitoring/ reads for any operator; asynqmon's changes (a queue pause)
// need an operator or an admin, and a viewer's changes nothing.
func TestMonitoringByRole(t *testing.T) {
	s := startWithOperators(t, nil)
	pause, resume := "/monitoring/api/queues/"+tasks.QueueLow+":pause", "/monitoring/api/queues/"+tasks.QueueLow+":resume"
	paused := func() bool {
		info, err := s.SC.Inspector.GetQueueInfo(tasks.QueueLow)
		if err != nil {
			t.Fatalf("low queue: %v", err)
		}
		return info.Paused
	}
	viewerBasic := func(r *http.Request) { r.SetBasicAuth("vera", viewerToken); r.Header.Set("Origin", s.APIURL) }
	for _, p := range []string{"/monitoring/", "/monitoring/api/queues"} {
		if r := send(t, "GET", s.APIURL+p, viewerBasic); r.status != http.StatusOK {
			t.Errorf("GET %s as viewer: %d %.200q, want 200", p, r.status, r.body)
		}
	}
	for _, c := range []struct{ method, path string }{{"POST", pause}, {"DELETE", "/monitoring/api/queues/" + tasks.QueueLow + "?force=true"}} {
		r := send(t, c.method, s.APIURL+c.path, viewerBasic)
		if r.status != http.StatusForbidden || errorCode(r.body) != "forbidden" {
			t.Errorf("%s %s as viewer: %d %.200q, want 403 forbidden", c.method, c.path, r.status, r.body)
		}
	}
	if paused() {
		t.Fatal("a viewer paused the low queue")
	}
	if r := send(t, "POST", s.APIURL+pause, bearerAuth(operatorToken)); r.status != http.StatusNoContent && r.status != http.StatusOK {
		t.Fatalf("pause as operator: %d %.200q", r.status, r.body)
	}
	if !paused() {
		t.Fatal("the operator's pause did not pause the low queue")
	}
	if r := send(t, "POST", s.APIURL+resume, bearerAuth(operatorToken)); r.status >= 300 || paused() {
		t.Fatalf("resume as operator: %d %.200q", r.status, r.body)
	}
}

// With ORDERFLOW_METRICS_AUTH=admin any operator reads /metrics; only an
// admin reads profiles.
func TestMetricsAndProfilesByRole(t *testing.T) {
	s := startWithOperators(t, func(c *svc.Config) { c.MetricsAuth = "admin" })
	for _, tok := range []string{viewerToken, operatorToken, s.Config.AdminToken} {
		if r := send(t, "GET", s.APIURL+"/metrics", bearerAuth(tok)); r.status != http.StatusOK {
			t.Errorf("/metrics with a %d-byte token: %d, want 200", len(tok), r.status)
		}
	}
	if r := send(t, "GET", s.APIURL+"/metrics", bearerAuth("no-such-operator-token")); r.status != http.StatusUnauthorized {
		t.Errorf("/metrics with no operator's token: %d, want 401", r.status)
	}
	for tok, want := range map[string]int{viewerToken: 403, operatorToken: 403, s.Config.AdminToken: 200, "": 401} {
		if r := send(t, "GET", s.APIURL+"/debug/pprof/cmdline", bearerAuth(tok)); r.status != want {
			t.Errorf("/debug/pprof/cmdline with a %d-byte token: %d, want %d", len(tok), r.status, want)
		}
	}
}
