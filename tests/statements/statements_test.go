package statements

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"orderflow/api/handler"
	"orderflow/internal/domain/refund"
	"orderflow/internal/domain/statement"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"
)

// fakeProvider is what the suite needs of one provider's fake: the
// normal payment path and the statement knobs, the same for every provider.
type fakeProvider struct {
	name string
	// zone is the provider's calendar (its statement days).
	zone *time.Location
	// knobs are the fake's clock and statement knobs, the same on every fake.
	knobs statementKnobs
	// pay pays an order checked out at the provider, as the buyer would,
	// and has the fake deliver its notification.
	pay func(t *testing.T, orderNo string, cents int64)
	// tradeNo is the provider's trade number of an order's payment.
	tradeNo func(orderNo string) string
	// refundSends is how many refund calls carried refundNo.
	refundSends func(refundNo string) int
	// refundCalls is how many refund calls the fake received in all.
	refundCalls func() int
	// refunded is what the fake returned of an order's trade, in cents.
	refunded func(orderNo, tradeNo string) int64
}

// statementKnobs is what every fake (and the simulator) offers a test of
// its statement: its clock, a line dropped or altered, a refund made in
// its dashboard, a payment orderflow never hears of.
type statementKnobs interface {
	SetClock(now func() time.Time)
	StatementDrop(ref string)
	StatementAlter(ref string, cents int64)
	DashboardRefund(orderNo string, cents int64) (string, error)
	PayUnseen(orderNo string, cents int64) (string, error)
}

// shop is a stack with the provider enabled against its fake, shop
// webhooks on, the worker binary running, a card product of 5000 cents
// a key and a buyer.
type shop struct {
	s     *testenv.Stack
	p     fakeProvider
	buyer *testenv.Client
	pid   int64
}

// price is the card product's price: every order here is one key.
const price = 5000

// webhookSecret signs the shop webhooks the stack sends.
const webhookSecret = "statements-webhook-secret"

// startShop boots the stack, pointed at the provider's fake (fs, zero for
// the simulator).
func startShop(t *testing.T, p fakeProvider, fs testenv.FakeShop) *shop {
	t.Helper()
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(hooks.Close)
	s := testenv.Start(t, testenv.Options{NoWorker: true, Configure: func(c *svc.Config) {
		c.PayProviders = "paysim"
		if p.name != "paysim" {
			c.PayProviders += "," + p.name
		}
		c.OrderTTL = svc.Duration(3 * time.Second)
		c.PayQueryAfter = svc.Duration(300 * time.Millisecond)
		c.WebhookURL, c.WebhookSecret = hooks.URL, webhookSecret
		if fs.Configure != nil {
			fs.Configure(c)
		}
	}})
	if fs.Started != nil {
		fs.Started(s.APIURL)
	}
	testenv.StartChildWorker(t, testenv.Binary("queue"), s.Config, "",
		"ORDERFLOW_WEBHOOK_URL="+hooks.URL, "ORDERFLOW_WEBHOOK_SECRET="+webhookSecret, "ORDERFLOW_WEBHOOK_RETRY_DELAY=50ms")
	s.WaitReconciled(t, 30*time.Second)
	waitCatchUp(t, s)
	_, buyer := s.NewUser(t, "ann", 0)
	return &shop{s: s, p: p, buyer: buyer, pid: s.NewCardProduct(t, "steam-50", price, 20)}
}

// waitCatchUp waits for the runs the worker's missed-slot catch-up queues
// at start (yesterday and the look-back days, for every provider) to end,
// so a test's run of one of those days is its own.
func waitCatchUp(t *testing.T, s *testenv.Stack) {
	t.Helper()
	want := int64(len(strings.Split(s.Config.PayProviders, ",")) * (1 + s.Config.StatementLookback))
	testenv.Eventually(t, 60*time.Second, "the start-up statement runs ended", func() (bool, error) {
		ended := s.Count(t, "SELECT COUNT(*) FROM statement_runs WHERE status NOT IN ('queued', 'running')")
		active := s.Count(t, "SELECT COUNT(*) FROM statement_runs WHERE status IN ('queued', 'running')")
		return ended >= want && active == 0, fmt.Errorf("%d ended, %d active", ended, active)
	})
}

// checkout creates a one-key order and starts its payment at the provider.
func (a *shop) checkout(t *testing.T) string {
	t.Helper()
	o := a.buyer.CreateOrder(t, a.pid, 1)
	if st := a.buyer.Do(t, "POST", "/api/v1/orders/"+o.OrderNo+"/pay", map[string]string{"provider": a.p.name}, nil); st != 200 {
		t.Fatalf("checkout %s at %s: status %d", o.OrderNo, a.p.name, st)
	}
	return o.OrderNo
}

// delivered is a one-key order paid through the normal path (checkout, the
// buyer pays, the provider notifies) and finished.
func (a *shop) delivered(t *testing.T) string {
	t.Helper()
	no := a.checkout(t)
	a.p.pay(t, no, price)
	a.s.WaitStatus(t, no, model.OrderFinished, 20*time.Second)
	return no
}

// runView and breakView are the admin API's own views of a run and a
// break: the suite decodes what the handler encodes, and the contract
// check (internal/testenv/contract) holds both to the OpenAPI document.
type (
	runView   = handler.StatementRunView
	breakView = handler.StatementBreakView
)

// apiError is an error answer's body.
type apiError struct {
	Error struct {
		Code string `json:"code"`
	} `json:"error"`
}

// startRun asks for a run of the provider's day and checks the 202.
func (a *shop) startRun(t *testing.T, day string) int64 {
	t.Helper()
	var r struct {
		RunID    int64  `json:"run_id"`
		Provider string `json:"provider"`
		Date     string `json:"date"`
		Status   string `json:"status"`
	}
	if st := a.s.Admin.Do(t, "POST", "/api/v1/admin/statements/runs", map[string]string{"provider": a.p.name, "date": day}, &r); st != http.StatusAccepted {
		t.Fatalf("POST statements/runs %s %s: status %d", a.p.name, day, st)
	}
	if r.RunID == 0 || r.Provider != a.p.name || r.Date != day || (r.Status != "queued" && r.Status != "running") {
		t.Fatalf("POST statements/runs answered %+v", r)
	}
	return r.RunID
}

// waitRun polls the run until it is done; a failed run fails the test.
func (a *shop) waitRun(t *testing.T, id int64) runView {
	t.Helper()
	var v runView
	testenv.Eventually(t, 60*time.Second, fmt.Sprintf("statement run %d done", id), func() (bool, error) {
		v = runView{}
		if st := a.s.Admin.Do(t, "GET", fmt.Sprintf("/api/v1/admin/statements/runs/%d", id), nil, &v); st != 200 {
			return false, fmt.Errorf("GET run: status %d", st)
		}
		if v.Status == "failed" {
			t.Fatalf("statement run %d failed: %s", id, v.Error)
		}
		return v.Status == "done", fmt.Errorf("status %s, error %q", v.Status, v.Error)
	})
	return v
}

// breaks lists the provider's breaks, every status, by id.
func (a *shop) breaks(t *testing.T) []breakView {
	t.Helper()
	var out struct {
		Breaks []breakView `json:"breaks"`
	}
	if st := a.s.Admin.Do(t, "GET", "/api/v1/admin/statements/breaks?provider="+a.p.name, nil, &out); st != 200 {
		t.Fatalf("GET statements/breaks: status %d", st)
	}
	sort.Slice(out.Breaks, func(i, j int) bool { return out.Breaks[i].ID < out.Breaks[j].ID })
	return out.Breaks
}

// adminOrder is the admin view's part the suite reads.
type adminOrder struct {
	Status        string `json:"status"`
	AmountCents   int64  `json:"amount_cents"`
	RefundedCents int64  `json:"refunded_cents"`
}

func (a *shop) adminOrder(t *testing.T, orderNo string) adminOrder {
	t.Helper()
	var v adminOrder
	if st := a.s.Admin.Do(t, "GET", "/api/v1/admin/orders/"+orderNo, nil, &v); st != 200 {
		t.Fatalf("GET admin order %s: status %d", orderNo, st)
	}
	return v
}

// pastDay is the provider's calendar day two days ago, and a clock that
// starts at its noon and runs at the real pace.
func pastDay(zone *time.Location) (day string, clock func() time.Time) {
	now := time.Now().In(zone)
	noon := time.Date(now.Year(), now.Month(), now.Day()-2, 12, 0, 0, 0, zone)
	start := time.Now()
	return noon.Format(time.DateOnly), func() time.Time { return noon.Add(time.Since(start)) }
}

// amounts writes a break's amounts for a message.
func amounts(b breakView) string {
	w := func(v *int64) string {
		if v == nil {
			return "null"
		}
		return fmt.Sprint(*v)
	}
	return "provider " + w(b.ProviderAmountCents) + ", ledger " + w(b.LedgerAmountCents)
}

// is reports whether v holds exactly want (nil for none).
func is(v *int64, want *int64) bool {
	if v == nil || want == nil {
		return v == nil && want == nil
	}
	return *v == *want
}

func cents(v int64) *int64 { return &v }

// runStatementDay plants the five cases on a past day of the provider's,
// runs the day's statement through the API twice, and checks what each
// run found and did.
func runStatementDay(t *testing.T, a *shop) {
	ctx := context.Background()
	p := a.p
	day, clock := pastDay(p.zone)
	p.knobs.SetClock(clock)
	defer p.knobs.SetClock(time.Now)

	// a. A normal payment.
	normal := a.delivered(t)
	// b. A partial refund made in the provider's dashboard, never notified.
	const dashboardCents = 1500
	refunded := a.delivered(t)
	if _, err := p.knobs.DashboardRefund(refunded, dashboardCents); err != nil {
		t.Fatalf("dashboard refund of %s: %v", refunded, err)
	}
	// c. A payment the statement leaves out.
	dropped := a.delivered(t)
	droppedTrade := p.tradeNo(dropped)
	p.knobs.StatementDrop(droppedTrade)
	// d. A payment the statement lists with another amount.
	const alteredCents = 4900
	altered := a.delivered(t)
	alteredTrade := p.tradeNo(altered)
	p.knobs.StatementAlter(alteredTrade, alteredCents)
	// e. An order that expired (the close asked the provider and saw
	// nothing), then paid with its notification lost.
	late := a.checkout(t)
	a.s.WaitStatus(t, late, model.OrderClosed, 30*time.Second)
	lateTrade, err := p.knobs.PayUnseen(late, price)
	if err != nil {
		t.Fatalf("unseen payment of %s: %v", late, err)
	}

	// Every payment the ledger holds carries the provider's time: the day.
	from, _ := time.ParseInLocation(time.DateOnly, day, p.zone)
	to := from.AddDate(0, 0, 1)
	for _, no := range []string{normal, refunded, dropped, altered} {
		pm, err := a.s.SC.Store.PaymentByTrade(ctx, p.name, p.tradeNo(no))
		if err != nil {
			t.Fatalf("payment of %s: %v", no, err)
		}
		if pm.PaidAt.Before(from) || !pm.PaidAt.Before(to) {
			t.Errorf("payment of %s: paid_at %s, want on %s %s (the provider's time)", no, pm.PaidAt.UTC(), day, p.zone)
		}
	}
	if n := a.s.Count(t, "SELECT COUNT(*) FROM payments WHERE provider = ? AND trade_no = ?", p.name, lateTrade); n != 0 {
		t.Fatalf("the ledger holds the unseen payment %s before any statement (%d rows)", lateTrade, n)
	}
	lateRefund := refund.NumberAt(p.name, late, lateTrade)
	callsBefore := p.refundCalls()

	// The day is over at the provider too once its clock is the real one.
	p.knobs.SetClock(time.Now)

	first := a.waitRun(t, a.startRun(t, day))
	t.Logf("%s: first run %+v", p.name, first)
	wantBreaks := map[string]int64{statement.BreakUnknownRefund: 1, statement.BreakMissingPayment: 1,
		statement.BreakAmountMismatch: 1, statement.BreakUnknownPayment: 1}
	if !reflect.DeepEqual(first.Breaks, wantBreaks) {
		t.Errorf("first run's breaks %v, want %v", first.Breaks, wantBreaks)
	}
	// Lines: 4 payments (normal, refunded, altered, late) and the dashboard
	// refund; matched: the normal and the refunded order's payments.
	if first.ProviderLines != 5 || first.Matched != 2 {
		t.Errorf("first run: provider_lines %d, matched %d; want 5, 2", first.ProviderLines, first.Matched)
	}
	if tt := first.Totals; tt.Payments != 4 || tt.GrossCents != 3*price+alteredCents || tt.Refunds != 1 || tt.RefundsCents != dashboardCents {
		t.Errorf("first run's totals %+v, want 4 payments of %d cents, 1 refund of %d", tt, 3*price+alteredCents, dashboardCents)
	}

	// The late payment is refunded through the provider, once.
	a.s.WaitStatus(t, late, model.OrderRefunded, 30*time.Second)
	if n := p.refundSends(lateRefund); n != 1 {
		t.Errorf("the fake saw %d refund calls for %s (the late payment), want 1", n, lateRefund)
	}
	if got := p.refunded(late, lateTrade); got != price {
		t.Errorf("the fake returned %d cents of the late payment, want %d", got, price)
	}
	if n := p.refundCalls() - callsBefore; n != 1 {
		t.Errorf("the fake received %d refund calls during the run, want 1", n)
	}

	// The dashboard refund is counted against its payment.
	if v := a.adminOrder(t, refunded); v.RefundedCents != dashboardCents || v.Status != "finished" {
		t.Errorf("order %s after the run: %+v, want finished with refunded_cents %d", refunded, v, dashboardCents)
	}

	listed := a.breaks(t)
	byKind := map[string][]breakView{}
	for _, b := range listed {
		if b.Provider != p.name || b.Date != day {
			t.Errorf("break %d of %s %s, want %s %s", b.ID, b.Provider, b.Date, p.name, day)
		}
		byKind[b.Kind] = append(byKind[b.Kind], b)
	}
	want := []struct {
		kind, orderNo, tradeNo string
		status                 statement.BreakStatus
		provider, ledger       *int64
	}{
		{statement.BreakUnknownRefund, refunded, p.tradeNo(refunded), "open", cents(dashboardCents), nil},
		{statement.BreakMissingPayment, dropped, droppedTrade, "open", nil, cents(price)},
		{statement.BreakAmountMismatch, altered, alteredTrade, "open", cents(alteredCents), cents(price)},
		{statement.BreakUnknownPayment, late, lateTrade, "resolved", cents(price), nil},
	}
	for _, w := range want {
		bs := byKind[w.kind]
		if len(bs) != 1 {
			t.Errorf("%d %s breaks listed, want 1: %+v", len(bs), w.kind, bs)
			continue
		}
		b := bs[0]
		if b.OrderNo != w.orderNo || b.TradeNo != w.tradeNo || b.Status != w.status ||
			!is(b.ProviderAmountCents, w.provider) || !is(b.LedgerAmountCents, w.ledger) {
			t.Errorf("%s break: order %s, trade %s, %s, %s; want order %s, trade %s, %s, provider %v ledger %v",
				w.kind, b.OrderNo, b.TradeNo, b.Status, amounts(b), w.orderNo, w.tradeNo, w.status, deref(w.provider), deref(w.ledger))
		}
		if w.status == "resolved" && (b.ResolvedBy != statement.ResolvedBySystem || b.ResolvedAt == nil) {
			t.Errorf("%s break resolved by %q at %v, want by %s", w.kind, b.ResolvedBy, b.ResolvedAt, statement.ResolvedBySystem)
		}
		if b.Action == "" {
			t.Errorf("%s break names no action", w.kind)
		}
	}
	if len(listed) != len(want) {
		t.Errorf("%d breaks listed, want %d: %+v", len(listed), len(want), listed)
	}
	if ub := byKind[statement.BreakUnknownRefund]; len(ub) == 1 && ub[0].RefundNo == "" {
		t.Errorf("the unknown refund's break names no refund_no: it is not recorded against its payment")
	}

	// One admin alert and one shop webhook per break.
	alerts := func() int64 {
		return a.s.Count(t, "SELECT COUNT(*) FROM notifications WHERE kind = ? AND notify_id LIKE ?", statement.NotifyBreak, "statement-break:"+p.name+":%")
	}
	hooks := func() int64 {
		return a.s.Count(t, "SELECT COUNT(*) FROM webhooks WHERE type = ? AND body LIKE ?", "statement.break", `%"provider":"`+p.name+`"%`)
	}
	if n := alerts(); n != int64(len(want)) {
		t.Errorf("%d statement_break alerts, want %d", n, len(want))
	}
	if n := hooks(); n != int64(len(want)) {
		t.Errorf("%d statement.break webhooks, want %d", n, len(want))
	}

	// The same day again: a new run that finds nothing new and sends nothing.
	callsAfter := p.refundCalls()
	secondID := a.startRun(t, day)
	if secondID == first.RunID {
		t.Fatalf("a run of the day after the first was done answered the first (%d)", secondID)
	}
	second := a.waitRun(t, secondID)
	t.Logf("%s: second run %+v", p.name, second)
	if len(second.Breaks) != 0 {
		t.Errorf("second run's breaks %v, want none", second.Breaks)
	}
	if again := a.breaks(t); !reflect.DeepEqual(again, listed) {
		t.Errorf("the breaks changed with the second run:\nbefore %+v\nafter  %+v", listed, again)
	}
	if n := p.refundCalls() - callsAfter; n != 0 {
		t.Errorf("the fake received %d refund calls during the second run, want 0", n)
	}
	if n := p.refundSends(lateRefund); n != 1 {
		t.Errorf("after the second run the fake saw %d refund calls for %s, want 1", n, lateRefund)
	}
	if v := a.adminOrder(t, refunded); v.RefundedCents != dashboardCents {
		t.Errorf("order %s after the second run: refunded_cents %d, want %d", refunded, v.RefundedCents, dashboardCents)
	}
	if got := a.buyer.Order(t, late).Status; got != "refunded" {
		t.Errorf("late order %s after the second run: %s, want refunded", late, got)
	}
	if n := alerts(); n != int64(len(want)) {
		t.Errorf("after the second run %d statement_break alerts, want %d", n, len(want))
	}
	if n := hooks(); n != int64(len(want)) {
		t.Errorf("after the second run %d statement.break webhooks, want %d", n, len(want))
	}
	if n := a.s.Count(t, "SELECT COUNT(*) FROM refunds WHERE order_no = ?", refunded); n != 1 {
		t.Errorf("%d refund rows for the dashboard refund's order, want 1", n)
	}
	if n := a.s.Count(t, "SELECT COUNT(*) FROM payments WHERE provider = ? AND trade_no = ?", p.name, lateTrade); n != 1 {
		t.Errorf("%d payment rows for the late payment, want 1", n)
	}
}

func deref(v *int64) any {
	if v == nil {
		return "null"
	}
	return *v
}
