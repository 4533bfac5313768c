package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/model"
)

// A viewer (ORDERFLOW_ADMIN_TOKENS) logs in with their own token, sees
// their name in the header and every page, and is refused every action
// with 403 while the order stays as it was; an operator's retry acts; the
// viewer can still log out.
func TestConsoleByRole(t *testing.T) {
	const viewer, operator = "console-viewer-token-01", "console-operator-token-01"
	s := testenv.StartFailFast(t, testenv.Shared, "vera.v:viewer:"+viewer+",otto:operator:"+operator)
	orderNo, _ := plantFailed(t, s, "roles-failed")

	vera := newBrowser(t, s.APIURL)
	vera.login(t, viewer)
	a := vera.do(t, "GET", "/console/", nil)
	if a.status != http.StatusOK || !strings.Contains(a.body, "vera.v") || !strings.Contains(a.body, `data-no="`+orderNo+`"`) {
		t.Fatalf("needs a hand as viewer: %d, name shown %v, failed order listed %v", a.status, strings.Contains(a.body, "vera.v"), strings.Contains(a.body, orderNo))
	}
	for _, p := range []string{"/console/glance", "/console/story?no=" + orderNo} {
		if a := vera.do(t, "GET", p, nil); a.status != http.StatusOK {
			t.Errorf("GET %s as viewer: %d, want 200", p, a.status)
		}
	}
	// The viewer's pages carry no action form: the log-out is her one post.
	for _, p := range []string{"/console/", "/console/story?no=" + orderNo} {
		a := vera.do(t, "GET", p, nil)
		if n := strings.Count(a.body, `<form method="post"`); n != 1 || !strings.Contains(a.body, `action="/console/logout"`) {
			t.Errorf("GET %s as viewer shows %d post forms, want the log-out alone", p, n)
		}
	}
	// Every console action (the role is checked before the number is
	// looked up, so any number will do for the refund and group routes).
	csrf := vera.csrf(t)
	for _, action := range []string{"/console/orders/" + orderNo + "/retry", "/console/orders/" + orderNo + "/refund", "/console/orders/" + orderNo + "/reveal",
		"/console/refunds/R-none/retry", "/console/refunds/R-none/resolve", "/console/groups/G-none/retry"} {
		if a := vera.do(t, "POST", action, url.Values{"csrf": {csrf}}, "Origin", s.APIURL); a.status != http.StatusForbidden || !strings.Contains(a.body, "forbidden") {
			t.Errorf("POST %s as viewer: %d %.200q, want 403 forbidden", action, a.status, a.body)
		}
	}
	if o := s.OrderRow(t, orderNo); o.Status != model.OrderFailed {
		t.Fatalf("after the viewer's refused actions the order is %s, want failed", o.Status)
	}

	otto := newBrowser(t, s.APIURL)
	otto.login(t, operator)
	if a := otto.do(t, "GET", "/console/", nil); !strings.Contains(a.body, "otto") || strings.Contains(a.body, "vera.v") {
		t.Errorf("the operator's header does not name otto alone")
	}
	if a := otto.do(t, "POST", "/console/orders/"+orderNo+"/retry", url.Values{"csrf": {otto.csrf(t)}}, "Origin", s.APIURL); a.status != http.StatusSeeOther {
		t.Fatalf("retry as operator: %d %.200q, want 303", a.status, a.body)
	}
	s.WaitStatus(t, orderNo, model.OrderFinished, 30*time.Second)

	// The retry is in the order's story, signed by otto, for the viewer
	// too; and in the audit trail the API reads.
	if a := vera.do(t, "GET", "/console/story?no="+orderNo, nil); !strings.Contains(a.body, `<b class="actor">otto</b>: <span class="action">order_retry</span>`) {
		t.Errorf("the story does not show otto's retry inline:\n%s", a.body)
	}
	if trail := (&testenv.Client{Base: s.APIURL, Token: viewer}).AuditTrail(t, orderNo); len(trail) != 1 || trail[0].Actor != "otto" || trail[0].Action != "order_retry" {
		t.Errorf("audit of %s read by the viewer: %+v, want otto's order_retry alone", orderNo, trail)
	}

	if a := vera.do(t, "POST", "/console/logout", url.Values{"csrf": {csrf}}); a.status != http.StatusSeeOther {
		t.Errorf("logout as viewer: %d, want 303", a.status)
	}
	if a := vera.do(t, "GET", "/console/", nil); a.status != http.StatusSeeOther {
		t.Errorf("the viewer's console after logging out: %d, want 303 to the login", a.status)
	}
}
