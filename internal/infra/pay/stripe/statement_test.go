package stripe_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/pay/paytest"
	"orderflow/internal/infra/pay/stripe"
	fake "orderflow/internal/payfake/stripe"
)

// clock is the fake's settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// statementSetup is a bundle whose fake records on a clock set to a past
// UTC day, with webhooks dropped; it returns the day and its midnight.
func statementSetup(t *testing.T) (*bundle, *clock, string, time.Time) {
	t.Helper()
	b := setup(t, 5*time.Second)
	b.fake.DropPayNotify.Store(true)
	b.fake.DropRefundNotify.Store(true)
	day := time.Now().UTC().AddDate(0, 0, -3).Truncate(24 * time.Hour)
	c := &clock{t: day}
	b.fake.SetClock(c.now)
	return b, c, day.Format(time.DateOnly), day
}

// readStatement reads a day whole, keeping each page's length.
func readStatement(t *testing.T, p *stripe.Provider, day string) (lines []pay.StatementLine, pages []int) {
	t.Helper()
	err := p.Statement(context.Background(), day, func(page []pay.StatementLine) error {
		pages = append(pages, len(page))
		lines = append(lines, page...)
		return nil
	})
	if err != nil {
		t.Fatalf("statement %s: %v", day, err)
	}
	return lines, pages
}

// payAt checks the order out and pays it at the given time; it returns
// the PaymentIntent id, the trade number.
func payAt(t *testing.T, b *bundle, c *clock, orderNo string, at time.Time) string {
	t.Helper()
	c.set(at.Add(-2 * time.Minute))
	co := checkout(t, b, orderNo)
	c.set(at)
	if _, _, err := b.fake.Pay(context.Background(), orderNo); err != nil {
		t.Fatal(err)
	}
	return co.Ref
}

// One day of what the fake processed, read back line by line: payments,
// orderflow's partial refund, a dashboard refund, a dropped line, an
// altered amount, a payment the product never heard of, a dispute; what
// lies on the days around it is left out.
func TestStatementDay(t *testing.T) {
	b, c, day, d0 := statementSetup(t)
	ctx := context.Background()
	at := func(h, m int) time.Time { return d0.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }

	pi1 := payAt(t, b, c, "S1", at(8, 0))
	pi2 := payAt(t, b, c, "S2", at(9, 0))
	c.set(at(10, 0))
	req := pay.RefundRequest{RefundNo: "R2", OrderNo: "S2", TradeNo: pi2, AmountCents: 2000, TotalCents: 5000}
	if _, err := b.p.Refund(ctx, req); err != nil {
		t.Fatal(err)
	}
	c.set(at(11, 0))
	dash, err := b.fake.DashboardRefund("S2", 1000)
	if err != nil {
		t.Fatal(err)
	}
	// The dashboard's refund counts: 2000 of 5000 are left to refund.
	over := pay.RefundRequest{RefundNo: "R2b", OrderNo: "S2", TradeNo: pi2, AmountCents: 2500, TotalCents: 5000}
	if _, err := b.p.Refund(ctx, over); err == nil {
		t.Fatal("a refund past what the dashboard left was taken")
	}
	pi3 := payAt(t, b, c, "S3", at(12, 0))
	b.fake.StatementDrop(pi3)
	pi4 := payAt(t, b, c, "S4", at(13, 0))
	b.fake.StatementAlter(pi4, 4900)
	c.set(at(14, 0))
	pi5, err := b.fake.PayUnseen("S5", 3000)
	if err != nil {
		t.Fatal(err)
	}
	c.set(at(14, 30))
	started := checkout(t, b, "S7") // the product closed it, hearing nothing
	if pi7, err := b.fake.PayUnseen("S7", 5000); err != nil || pi7 != started.Ref {
		t.Fatalf("unseen payment of a started order = %s, %v; want its intent %s", pi7, err, started.Ref)
	}
	pi7 := started.Ref
	pi6 := payAt(t, b, c, "S6", at(15, 0))
	c.set(at(16, 0))
	du, _, err := b.fake.OpenDispute("S6", "fraudulent")
	if err != nil {
		t.Fatal(err)
	}
	c.set(at(17, 0))
	if _, err := b.fake.CloseDispute(du, "won"); err != nil { // its reversal is no line
		t.Fatal(err)
	}
	payAt(t, b, c, "before", d0.Add(-time.Second))
	payAt(t, b, c, "after", d0.Add(24*time.Hour))

	lines, _ := readStatement(t, b.p, day)
	fee := fake.ChargeFee
	want := map[string]pay.StatementLine{
		pi1:  {Kind: pay.LinePayment, TradeNo: pi1, OrderNo: "S1", Ref: pi1, AmountCents: 5000, FeeCents: fee(5000), At: at(8, 0)},
		pi2:  {Kind: pay.LinePayment, TradeNo: pi2, OrderNo: "S2", Ref: pi2, AmountCents: 5000, FeeCents: fee(5000), At: at(9, 0)},
		"R2": {Kind: pay.LineRefund, TradeNo: pi2, OrderNo: "S2", RefundNo: "R2", AmountCents: 2000, At: at(10, 0)},
		dash: {Kind: pay.LineRefund, TradeNo: pi2, Ref: dash, AmountCents: 1000, At: at(11, 0)},
		pi4:  {Kind: pay.LinePayment, TradeNo: pi4, OrderNo: "S4", Ref: pi4, AmountCents: 4900, FeeCents: fee(5000), At: at(13, 0)},
		pi5:  {Kind: pay.LinePayment, TradeNo: pi5, OrderNo: "S5", Ref: pi5, AmountCents: 3000, FeeCents: fee(3000), At: at(14, 0)},
		pi7:  {Kind: pay.LinePayment, TradeNo: pi7, OrderNo: "S7", Ref: pi7, AmountCents: 5000, FeeCents: fee(5000), At: at(14, 30)},
		pi6:  {Kind: pay.LinePayment, TradeNo: pi6, OrderNo: "S6", Ref: pi6, AmountCents: 5000, FeeCents: fee(5000), At: at(15, 0)},
		du:   {Kind: pay.LineDispute, TradeNo: pi6, Ref: du, AmountCents: 5000, FeeCents: fake.DisputeFee, At: at(16, 0)},
	}
	got := map[string]pay.StatementLine{}
	for i, l := range lines {
		key := l.Ref
		if l.RefundNo != "" {
			key = l.RefundNo
			if !strings.HasPrefix(l.Ref, "re_") {
				t.Errorf("refund %s: Ref %q, want Stripe's re_ id", l.RefundNo, l.Ref)
			}
			l.Ref = ""
		}
		if _, dup := got[key]; dup {
			t.Errorf("line %s listed twice", key)
		}
		got[key] = l
		if i > 0 && l.At.After(lines[i-1].At) {
			t.Errorf("line %d (%s) is newer than the one before: Stripe lists newest first", i, key)
		}
	}
	for key, w := range want {
		if g, ok := got[key]; !ok {
			t.Errorf("line %s missing", key)
		} else if g != w {
			t.Errorf("line %s:\n got %+v\nwant %+v", key, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d lines, want %d (the dropped payment, the days around and the dispute's reversal left out): %+v", len(got), len(want), lines)
	}

	// The ledger learns the payment's time as the statement dates it.
	for _, tc := range []struct{ orderNo, ref string }{{"S1", pi1}, {"S1", ""}, {"S5", ""}} {
		paid, err := b.p.QueryPayment(ctx, tc.orderNo, tc.ref)
		if err != nil || paid == nil {
			t.Fatalf("query %s (ref %q) = %v, %v", tc.orderNo, tc.ref, paid, err)
		}
		if l := want[paid.TradeNo]; !paid.At.Equal(l.At) {
			t.Errorf("query %s (ref %q): At %v, the statement says %v", tc.orderNo, tc.ref, paid.At, l.At)
		}
	}
}

// A day of more lines than a page arrives in full pages and a rest, none
// longer than pay.StatementPage; fn's error stops the read.
func TestStatementPages(t *testing.T) {
	b, c, day, d0 := statementSetup(t)
	n := 2*pay.StatementPage + 1
	for i := range n {
		c.set(d0.Add(time.Duration(i) * time.Second))
		if _, err := b.fake.PayUnseen(fmt.Sprintf("P%05d", i), 100); err != nil {
			t.Fatal(err)
		}
	}
	lines, pages := readStatement(t, b.p, day)
	if len(pages) != 3 || len(lines) != n {
		t.Fatalf("%d lines in pages %v, want %d in 3 pages", len(lines), pages, n)
	}
	for _, size := range pages {
		if size > pay.StatementPage {
			t.Errorf("a page of %d lines, more than %d", size, pay.StatementPage)
		}
	}
	seen := map[string]bool{}
	for _, l := range lines {
		if seen[l.TradeNo] {
			t.Fatalf("%s listed twice across pages", l.TradeNo)
		}
		seen[l.TradeNo] = true
	}
	paytest.CheckStatementStops(t, b.p, day)
}

// A call Stripe refuses (another account's key) or an answer not as asked
// (sources left unexpanded on the way) is an error, and no line is handed
// over; a day not yet over is not ready; a day that is no date is refused.
func TestStatementRefusals(t *testing.T) {
	b, c, day, d0 := statementSetup(t)
	payAt(t, b, c, "X1", d0.Add(time.Hour))
	read := func(p *stripe.Provider, day string) (int, error) {
		n := 0
		err := p.Statement(context.Background(), day, func(page []pay.StatementLine) error { n += len(page); return nil })
		return n, err
	}
	provider := func(apiURL, key string) *stripe.Provider {
		p, err := stripe.New(stripe.Config{SecretKey: key, WebhookSecret: b.fake.WebhookSecret, APIURL: apiURL, Currency: "cny"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	target, _ := url.Parse(b.fake.URL)
	unexpand := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		q := r.Out.URL.Query()
		for k := range q {
			if strings.HasPrefix(k, "expand") {
				q.Del(k)
			}
		}
		r.Out.URL.RawQuery = q.Encode()
	}})
	t.Cleanup(unexpand.Close)
	for name, p := range map[string]*stripe.Provider{
		"another key": provider(b.fake.URL, "sk_test_another"),
		"unexpanded":  provider(unexpand.URL, b.fake.SecretKey),
	} {
		n, err := read(p, day)
		t.Logf("%s: %v", name, err)
		if err == nil || n != 0 {
			t.Errorf("%s: %d lines, %v; want an error and no line", name, n, err)
		}
	}
	if n, err := read(b.p, day); err != nil || n != 1 {
		t.Fatalf("the genuine read: %d lines, %v", n, err)
	}
	if _, err := read(b.p, time.Now().UTC().Format(time.DateOnly)); !errors.Is(err, pay.ErrStatementNotReady) {
		t.Errorf("today: %v, want ErrStatementNotReady", err)
	}
	for _, bad := range []string{"", "2026-13-01", "yesterday", "2026-01-02T00:00:00Z"} {
		if _, err := read(b.p, bad); err == nil || errors.Is(err, pay.ErrStatementNotReady) {
			t.Errorf("day %q: %v, want a bad-day error", bad, err)
		}
	}
	if z := b.p.StatementZone(); z != time.UTC {
		t.Errorf("zone %v, want UTC", z)
	}
}

// A UTC day runs from 00:00:00 to 23:59:59: a payment in its last second
// is on it, one at the next midnight on the next day.
func TestStatementDayBounds(t *testing.T) {
	b, c, day, d0 := statementSetup(t)
	last := payAt(t, b, c, "B1", d0.Add(24*time.Hour-time.Second))
	next := payAt(t, b, c, "B2", d0.Add(24*time.Hour))
	first := payAt(t, b, c, "B3", d0)
	for d, want := range map[string][]string{
		day: {last, first},
		d0.AddDate(0, 0, 1).Format(time.DateOnly): {next},
	} {
		lines, _ := readStatement(t, b.p, d)
		var got []string
		for _, l := range lines {
			got = append(got, l.TradeNo)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("day %s lists %v, want %v", d, got, want)
		}
	}
}
