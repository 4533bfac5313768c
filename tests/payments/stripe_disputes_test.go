package payments

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"orderflow/internal/audit"
	"orderflow/internal/infra/pay"
	stripefake "orderflow/internal/payfake/stripe"
	"orderflow/internal/testenv"
	"orderflow/svc"
)

// disputeView is one entry of the order view's disputes.
type disputeView struct {
	DisputeID     string     `json:"dispute_id"`
	Status        string     `json:"status"`
	Reason        string     `json:"reason"`
	AmountCents   int64      `json:"amount_cents"`
	Flag          string     `json:"flag"`
	EvidenceDueBy *time.Time `json:"evidence_due_by"`
}

// A Stripe chargeback opened, updated and lost, each signed event sent
// twice by the fake (Stripe retries, and may send one event more than
// once): the order view shows one dispute in the right status at each
// step, the shop gets one order.disputed, the admin one alert, the
// console's needs-a-hand lists it with its evidence due date while it is
// open, a late older event does not reopen it, and the money audit
// balances once it is lost. A dispute on a payment already refunded is
// flagged so.
func TestStripeDisputes(t *testing.T) {
	f, fs := testenv.StartStripeFake(t)
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(shop.Close)
	stripeOnly := fs.Configure
	fs.Configure = func(c *svc.Config) {
		stripeOnly(c)
		c.WebhookURL, c.WebhookSecret = shop.URL, "shop-webhook-secret"
	}
	a := startProviderShop(t, fakeProvider{name: pay.NameStripe, tradeNo: f.IntentID}, fs)
	ctx := t.Context()
	twice := func(t *testing.T, what string, n *stripefake.Notification, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for i := 0; i < 2; i++ {
			if st, err := n.Send(ctx); err != nil || st != http.StatusOK {
				t.Fatalf("%s, delivery %d: status %d, err %v; want 200", what, i+1, st, err)
			}
		}
	}
	disputes := func(t *testing.T, orderNo string) []disputeView {
		t.Helper()
		var v struct {
			Disputes []disputeView `json:"disputes"`
		}
		if st := a.buyer.Do(t, "GET", "/api/v1/orders/"+orderNo, nil, &v); st != 200 {
			t.Fatalf("get order %s: status %d", orderNo, st)
		}
		return v.Disputes
	}
	console := loginConsole(t, a.s)

	o, _ := a.order(t)
	if _, _, err := f.Pay(ctx, o.OrderNo); err != nil {
		t.Fatal(err)
	}
	a.delivered(t, o.OrderNo)

	id, opened, err := f.OpenDispute(o.OrderNo, "fraudulent")
	twice(t, "charge.dispute.created", opened, err)
	got := disputes(t, o.OrderNo)
	if len(got) != 1 || got[0].DisputeID != id || got[0].Status != "needs_response" || got[0].Reason != "fraudulent" ||
		got[0].AmountCents != o.AmountCents || got[0].Flag != "" || got[0].EvidenceDueBy == nil {
		t.Fatalf("after created: disputes %+v, want one needs_response fraudulent of %d cents, unflagged, with a due date", got, o.AmountCents)
	}
	due := got[0].EvidenceDueBy.UTC().Format("2006-01-02 15:04 UTC")
	if page := console(t, ""); !strings.Contains(page, `id="disputes"`) || !strings.Contains(page, o.OrderNo) || !strings.Contains(page, due) {
		t.Errorf("needs a hand does not list dispute %s of order %s due %s", id, o.OrderNo, due)
	}

	underReview, err := f.UpdateDispute(id, "under_review")
	twice(t, "charge.dispute.updated", underReview, err)
	if got := disputes(t, o.OrderNo); len(got) != 1 || got[0].Status != "under_review" {
		t.Fatalf("after updated: disputes %+v, want one under_review", got)
	}

	lost, err := f.CloseDispute(id, "lost")
	twice(t, "charge.dispute.closed", lost, err)
	twice(t, "the older charge.dispute.updated again, late", underReview, nil)
	if got := disputes(t, o.OrderNo); len(got) != 1 || got[0].Status != "lost" {
		t.Fatalf("after closed lost and a late update: disputes %+v, want one lost", got)
	}
	if page := console(t, ""); strings.Contains(page, id) {
		t.Errorf("needs a hand still lists dispute %s once it is lost", id)
	}
	if page := console(t, "story?no="+o.OrderNo); !strings.Contains(page, `id="order-disputes"`) || !strings.Contains(page, id) {
		t.Errorf("the order story does not show dispute %s", id)
	}
	if n := a.s.Count(t, `SELECT lost_cents FROM disputes WHERE dispute_id = ?`, id); n != o.AmountCents {
		t.Errorf("lost dispute records %d cents taken back, want %d", n, o.AmountCents)
	}
	if n := a.s.Count(t, `SELECT COUNT(*) FROM webhooks WHERE type = 'order.disputed' AND body LIKE ?`, "%"+o.OrderNo+"%"); n != 1 {
		t.Errorf("%d order.disputed shop webhooks, want 1", n)
	}
	if n := a.s.Count(t, `SELECT COUNT(*) FROM notifications WHERE kind = 'dispute_opened' AND message LIKE ?`, "%"+id+"%"); n != 1 {
		t.Errorf("%d dispute_opened admin alerts, want 1", n)
	}

	// A payment that landed after its order closed is refunded; a
	// chargeback on it would take the money back twice: flagged.
	late, _ := a.order(t)
	a.waitStatus(t, late.OrderNo, "closed")
	if _, _, err := f.Pay(ctx, late.OrderNo); err != nil {
		t.Fatal(err)
	}
	a.waitStatus(t, late.OrderNo, "refunded")
	id2, opened2, err := f.OpenDispute(late.OrderNo, "duplicate")
	twice(t, "charge.dispute.created on a refunded payment", opened2, err)
	if got := disputes(t, late.OrderNo); len(got) != 1 || got[0].DisputeID != id2 || got[0].Flag != "already_refunded" {
		t.Fatalf("dispute on a refunded payment: %+v, want one flagged already_refunded", got)
	}
	if n := a.s.Count(t, `SELECT COUNT(*) FROM notifications WHERE kind = 'dispute_opened' AND message LIKE ?`, "%"+id2+"%already_refunded%"); n != 1 {
		t.Errorf("%d dispute_opened alerts naming the already_refunded flag, want 1", n)
	}
	if page := console(t, ""); !strings.Contains(page, id2) || !strings.Contains(page, "already_refunded") {
		t.Errorf("needs a hand does not show dispute %s flagged already_refunded", id2)
	}

	a.s.WaitQueuesIdle(t, 20*time.Second)
	auditMoney(t, a.s)
}

// auditMoney runs the ledger audit, fails on any violation and on an audit
// that checked no dispute.
func auditMoney(t *testing.T, s *testenv.Stack) {
	t.Helper()
	rep := s.CheckAudit(t, "the disputes")
	if res := rep.Result(audit.RuleDisputeMoney); res.Checked == 0 {
		t.Errorf("the audit checked no dispute")
	}
}

// loginConsole logs in to the operator console with the admin token and
// returns a reader of its pages ("" is needs-a-hand).
func loginConsole(t *testing.T, s *testenv.Stack) func(t *testing.T, page string) string {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(s.APIURL+"/console/login", url.Values{"token": {s.Config.AdminToken}})
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("console login: status %d", resp.StatusCode)
	}
	return func(t *testing.T, page string) string {
		t.Helper()
		resp, err := c.Get(s.APIURL + "/console/" + page)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("console /%s: status %d", page, resp.StatusCode)
		}
		return string(b)
	}
}
