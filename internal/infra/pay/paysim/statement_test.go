package paysim_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/pay/paysim"
	"orderflow/internal/infra/pay/paytest"
	"orderflow/internal/infra/sign"
	sim "orderflow/internal/paysim"

	"github.com/google/go-cmp/cmp"
)

const secret = "statement-secret"

// testBundle is a simulator on a real listener, orderflow's provider client
// pointed at it, and a stand-in for orderflow's notification endpoint.
type testBundle struct {
	*paytest.Endpoint // parses what the simulator notifies with prov
	sim               *sim.Sim
	url               string
	prov              *paysim.Provider
	client            *sim.Client // the harness's admin calls
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{Endpoint: paytest.NewEndpoint(t)}
	b.sim = sim.New(sim.Config{Secret: secret, NotifyBaseURL: b.URL, Seed: 1})
	srv := httptest.NewServer(b.sim.Handler())
	t.Cleanup(b.sim.Close)
	t.Cleanup(srv.Close)
	b.url = srv.URL
	b.prov = paysim.New(srv.URL, secret, 5*time.Second)
	b.Use(b.prov)
	b.client = &sim.Client{BaseURL: srv.URL, Secret: secret}
	return b
}

// paid is the payment notification of orderNo that reached the endpoint
// (nil when none did).
func (b *testBundle) paid(t *testing.T, orderNo string) *pay.Paid {
	t.Helper()
	for _, ev := range b.WaitEvents(t, 0) {
		if ev.Paid != nil && ev.Paid.OrderNo == orderNo {
			return ev.Paid
		}
	}
	return nil
}

// pay makes the simulator take a payment and notify orderflow.
func (b *testBundle) pay(t *testing.T, orderNo string, cents int64) string {
	t.Helper()
	tradeNo, _, err := b.client.Pay(context.Background(), orderNo, cents, "")
	if err != nil {
		t.Fatalf("pay %s: %v", orderNo, err)
	}
	return tradeNo
}

// clock fixes the simulator's clock at at.
func (b *testBundle) clock(at time.Time) { b.sim.SetClock(func() time.Time { return at }) }

// read reads day's statement through the provider and returns its lines and
// each page's length.
func read(t *testing.T, p *paysim.Provider, day string) ([]pay.StatementLine, []int) {
	t.Helper()
	var lines []pay.StatementLine
	var pages []int
	err := p.Statement(context.Background(), day, func(page []pay.StatementLine) error {
		lines = append(lines, page...)
		pages = append(pages, len(page))
		return nil
	})
	if err != nil {
		t.Fatalf("statement %s: %v", day, err)
	}
	return lines, pages
}

var day = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func at(h, m int) time.Time {
	return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
}

func TestStatementListsWhatTheSimulatorDid(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	if b.prov.StatementZone() != time.UTC {
		t.Errorf("zone %v, want UTC", b.prov.StatementZone())
	}

	b.clock(at(9, 0))
	t1 := b.pay(t, "O-1", 1000)
	t2 := b.pay(t, "O-2", 2000)
	t3 := b.pay(t, "O-3", 3000)
	b.clock(at(10, 15))
	st, err := b.prov.Refund(ctx, pay.RefundRequest{RefundNo: "R-1", OrderNo: "O-1", TradeNo: t1, AmountCents: 300, TotalCents: 1000})
	if err != nil || st != pay.RefundSucceeded {
		t.Fatalf("orderflow's refund: %q, %v", st, err)
	}
	dash, err := b.sim.DashboardRefund("O-1", 200)
	if err != nil {
		t.Fatal(err)
	}
	// The dashboard's refund counts: orderflow cannot refund past the rest.
	if _, err := b.prov.Refund(ctx, pay.RefundRequest{RefundNo: "R-2", OrderNo: "O-1", TradeNo: t1, AmountCents: 501, TotalCents: 1000}); err == nil {
		t.Error("a refund past what the dashboard left was accepted")
	}
	b.sim.StatementDrop(t2)
	b.sim.StatementAlter(t3, 2900)
	b.clock(at(23, 30)) // still day D in UTC, paysim's zone
	unseen, err := b.sim.PayUnseen("O-4", 4000)
	if err != nil {
		t.Fatal(err)
	}
	b.clock(at(24, 30)) // D+1
	t5 := b.pay(t, "O-5", 5000)
	b.clock(at(48, 0)) // both days over

	got, _ := read(t, b.prov, "2026-12-01")
	want := []pay.StatementLine{
		{Kind: pay.LinePayment, TradeNo: t1, OrderNo: "O-1", Ref: t1, AmountCents: 1000, FeeCents: 6, At: at(9, 0)},
		{Kind: pay.LinePayment, TradeNo: t3, OrderNo: "O-3", Ref: t3, AmountCents: 2900, FeeCents: 18, At: at(9, 0)},
		{Kind: pay.LineRefund, TradeNo: t1, OrderNo: "O-1", RefundNo: "R-1", Ref: "R-1", AmountCents: 300, At: at(10, 15)},
		{Kind: pay.LineRefund, TradeNo: t1, OrderNo: "O-1", Ref: dash, AmountCents: 200, At: at(10, 15)},
		{Kind: pay.LinePayment, TradeNo: unseen, OrderNo: "O-4", Ref: unseen, AmountCents: 4000, FeeCents: 24, At: at(23, 30)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statement of %s (-want +got):\n%s", day.Format(time.DateOnly), diff)
	}
	next, _ := read(t, b.prov, "2026-12-02")
	wantNext := []pay.StatementLine{{Kind: pay.LinePayment, TradeNo: t5, OrderNo: "O-5", Ref: t5, AmountCents: 5000, FeeCents: 30, At: at(24, 30)}}
	if diff := cmp.Diff(wantNext, next); diff != "" {
		t.Errorf("statement of the next day (-want +got):\n%s", diff)
	}
	if empty, pages := read(t, b.prov, "2026-11-30"); len(empty) != 0 || len(pages) != 0 {
		t.Errorf("a quiet day: %d lines in %d pages, want none and fn never called", len(empty), len(pages))
	}

	// The unseen payment was never notified, but the query finds it, and
	// the statement's trade number is the one a payment names.
	if b.paid(t, "O-4") != nil {
		t.Error("the unseen payment was notified")
	}
	paid, err := b.prov.QueryPayment(ctx, "O-4", "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&pay.Paid{OrderNo: "O-4", TradeNo: unseen, AmountCents: 4000, At: at(23, 30)}, paid); diff != "" {
		t.Errorf("query of the unseen payment (-want +got):\n%s", diff)
	}
}

func TestPaidCarriesTheSimulatorsTime(t *testing.T) {
	b := setup(t)
	b.clock(at(9, 41))
	tradeNo := b.pay(t, "O-1", 1000)
	want := &pay.Paid{OrderNo: "O-1", TradeNo: tradeNo, AmountCents: 1000, At: at(9, 41)}
	if diff := cmp.Diff(want, b.paid(t, "O-1")); diff != "" {
		t.Errorf("notification (-want +got):\n%s", diff)
	}
	got, err := b.prov.QueryPayment(context.Background(), "O-1", "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("query (-want +got):\n%s", diff)
	}

	// An older simulator's notification, without paid_at, still reads.
	old := []byte(`{"order_no":"O-9","trade_no":"T9","amount_cents":5}`)
	r := httptest.NewRequest(http.MethodPost, "/api/v1/payments/notify", bytes.NewReader(old))
	r.Header.Set(sign.Header, sign.Sum(secret, old))
	if ev, err := b.prov.Parse(r, old); err != nil || ev.Paid == nil || !ev.Paid.At.IsZero() {
		t.Errorf("old notification: %+v, %v; want a payment with no time", ev, err)
	}
}

func TestStatementArrivesInPages(t *testing.T) {
	b := setup(t)
	b.clock(at(12, 0))
	const synthetic = 2*pay.StatementPage + 10
	if err := b.sim.Synthesize("2026-12-01", synthetic, "SYN"); err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{"O-1", "O-2", "O-3"} {
		if _, err := b.sim.PayUnseen(o, 100); err != nil {
			t.Fatal(err)
		}
	}
	b.clock(at(24, 0))
	lines, pages := read(t, b.prov, "2026-12-01")
	if len(pages) < 2 {
		t.Errorf("%d lines in %d page(s), want more than one", len(lines), len(pages))
	}
	for i, n := range pages {
		if n > pay.StatementPage || n == 0 {
			t.Errorf("page %d holds %d lines, want 1 to %d", i, n, pay.StatementPage)
		}
	}
	refs := map[string]bool{}
	for _, l := range lines {
		refs[l.Ref] = true
	}
	if len(lines) != synthetic+3 || len(refs) != synthetic+3 {
		t.Errorf("%d lines, %d distinct, want %d", len(lines), len(refs), synthetic+3)
	}
	if l := lines[7]; l.TradeNo != "SYN000000007" || l.OrderNo != "SYN000000007" || l.AmountCents != 107 {
		t.Errorf("synthetic line 7 = %+v", l)
	}
}

// tamperer stands between the provider and the simulator and rewrites the
// statement's answers with edit, keeping the simulator's headers.
func tamperer(t *testing.T, target string, edit func(h http.Header, body []byte) []byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.RequestURI(), r.Body)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		body = edit(w.Header(), body)
		w.Header().Del("Content-Length")
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestTamperedStatementHandsNoLine(t *testing.T) {
	b := setup(t)
	b.clock(at(9, 0))
	b.pay(t, "O-1", 1000)
	b.clock(at(24, 0))

	tests := []struct {
		name string
		edit func(h http.Header, body []byte) []byte
	}{
		{"amount changed", func(_ http.Header, body []byte) []byte {
			return bytes.Replace(body, []byte(`"amount_cents":1000`), []byte(`"amount_cents":1`), 1)
		}},
		{"signature removed", func(h http.Header, body []byte) []byte { h.Del(sign.Header); return body }},
		{"signed with another key", func(h http.Header, body []byte) []byte {
			h.Set(sign.Header, sign.Sum("not-the-secret", body))
			return body
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := paysim.New(tamperer(t, b.url, tt.edit), secret, 5*time.Second)
			calls := 0
			err := p.Statement(context.Background(), "2026-12-01", func([]pay.StatementLine) error { calls++; return nil })
			if !errors.Is(err, pay.ErrBadSignature) {
				t.Errorf("err = %v, want a bad signature", err)
			}
			if calls != 0 {
				t.Errorf("fn called %d times, want none", calls)
			}
		})
	}

	// The untouched statement through the same kind of proxy reads fine.
	p := paysim.New(tamperer(t, b.url, func(_ http.Header, body []byte) []byte { return body }), secret, 5*time.Second)
	if lines, _ := read(t, p, "2026-12-01"); len(lines) != 1 {
		t.Errorf("%d lines through an honest proxy, want 1", len(lines))
	}

	// A provider with the wrong secret is refused by the simulator.
	wrong := paysim.New(b.url, "not-the-secret", 5*time.Second)
	if err := wrong.Statement(context.Background(), "2026-12-01", func([]pay.StatementLine) error {
		t.Error("fn called with a refused request")
		return nil
	}); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("err = %v, want the simulator's 401", err)
	}
}

func TestStatementRefusals(t *testing.T) {
	b := setup(t)
	b.clock(at(23, 59))
	b.pay(t, "O-1", 1000)
	never := func([]pay.StatementLine) error {
		t.Error("fn called")
		return nil
	}
	ctx := context.Background()

	if err := b.prov.Statement(ctx, "2026-12-01", never); !errors.Is(err, pay.ErrStatementNotReady) {
		t.Errorf("a day not over: %v, want ErrStatementNotReady", err)
	}
	for _, d := range []string{"", "2026-12-32", "1/12/2026", "2026-12-01T00:00:00Z"} {
		if err := b.prov.Statement(ctx, d, never); err == nil || errors.Is(err, pay.ErrStatementNotReady) {
			t.Errorf("day %q: %v, want a bad-day error", d, err)
		}
	}

	// fn's error stops the read after its page and comes back as is.
	b.clock(at(24, 0))
	if err := b.sim.Synthesize("2026-12-01", 3*pay.StatementPage, "S"); err != nil {
		t.Fatal(err)
	}
	paytest.CheckStatementStops(t, b.prov, "2026-12-01")
}
