package alipay_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"orderflow/internal/domain/refund"
	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/pay/alipay"
	"orderflow/internal/infra/pay/paytest"
	fake "orderflow/internal/payfake/alipay"

	"github.com/google/go-cmp/cmp"
)

// shanghai is the bill's calendar (UTC+8 all year).
var shanghai = time.FixedZone("Asia/Shanghai", 8*3600)

// bundle is the fake gateway served over HTTP, the provider pointed at it,
// a notify endpoint parsing what arrives with the provider, and the fake's
// clock, moved by the test.
type bundle struct {
	fake *fake.Fake
	p    *alipay.Provider

	mu   sync.Mutex
	now  time.Time
	paid []*pay.Paid
}

func setup(t *testing.T) *bundle {
	t.Helper()
	f, err := fake.New()
	if err != nil {
		t.Fatal(err)
	}
	b := &bundle{fake: f, now: time.Now()}
	f.SetClock(func() time.Time {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.now
	})
	gw := httptest.NewServer(f.Handler())
	notify := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ev, err := b.p.Parse(r, body)
		if err == nil && ev.Paid != nil {
			b.mu.Lock()
			b.paid = append(b.paid, ev.Paid)
			b.mu.Unlock()
		}
		b.p.Answer(w, err == nil)
	}))
	t.Cleanup(func() { f.Close(); gw.Close(); notify.Close() })
	b.p, err = alipay.New(alipay.Config{AppID: fake.AppID, PrivateKey: f.AppPrivateKey, PublicKey: f.AlipayPublicKey,
		GatewayURL: gw.URL, NotifyURL: notify.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *bundle) setClock(at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.now = at
}

// pay checks orderNo out and pays it at the fake (notified), returning
// its trade number.
func (b *bundle) pay(t *testing.T, orderNo string, cents int64) string {
	t.Helper()
	ctx := context.Background()
	if _, err := b.p.Checkout(ctx, pay.CheckoutRequest{OrderNo: orderNo, AmountCents: cents,
		Subject: "点卡,50元", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	ans, err := b.fake.Pay(ctx, orderNo, fake.PayOptions{})
	if err != nil || len(ans) != 1 || ans[0].Body != "success" {
		t.Fatalf("pay %s: %v %+v", orderNo, err, ans)
	}
	return b.fake.TradeNo(orderNo)
}

// read is the day's statement, page by page.
func (b *bundle) read(t *testing.T, day string) ([][]pay.StatementLine, error) {
	t.Helper()
	var pages [][]pay.StatementLine
	err := b.p.Statement(context.Background(), day, func(page []pay.StatementLine) error {
		pages = append(pages, page)
		return nil
	})
	return pages, err
}

// A day with payments, an orderflow partial refund, a dashboard refund, a
// dropped line, an altered amount and an unseen payment reads back line by
// line, on Beijing days, with the payment times Parse and QueryPayment
// also give.
func TestStatementDay(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	at := func(hour, minute int) time.Time { return time.Date(2026, 3, 10, hour, minute, 0, 0, shanghai) }

	// 23:30 UTC on 9 March is 07:30 on the 10th in Beijing: the 10th's bill.
	b.setClock(time.Date(2026, 3, 9, 23, 30, 0, 0, time.UTC))
	early := b.pay(t, "OF-early", 1000)
	// 23:59:59 on the 9th in Beijing is the 9th's, not the 10th's.
	b.setClock(time.Date(2026, 3, 9, 23, 59, 59, 0, shanghai))
	b.pay(t, "OF-before", 1000)
	b.setClock(at(10, 0))
	plain := b.pay(t, "OF-plain", 5000)
	b.setClock(at(11, 0))
	dash := b.pay(t, "OF-dash", 5000)
	b.setClock(at(12, 0))
	dropped := b.pay(t, "OF-dropped", 5000)
	b.setClock(at(13, 0))
	altered := b.pay(t, "OF-altered", 5000)
	b.fake.StatementDrop(dropped)
	b.fake.StatementAlter(altered, 4999)

	b.setClock(at(14, 0))
	refundNo := refund.OperatorNumber("OF-plain", "key-1")
	if st, err := b.p.Refund(ctx, pay.RefundRequest{RefundNo: refundNo, OrderNo: "OF-plain", TradeNo: plain,
		AmountCents: 1200, TotalCents: 5000}); err != nil || st != pay.RefundSucceeded {
		t.Fatalf("refund: %q %v", st, err)
	}
	b.setClock(at(14, 30))
	retryNo := refund.NumberAt(pay.NameAlipay, "OF-plain", plain) + "-2" // a retry's generation
	if st, err := b.p.Refund(ctx, pay.RefundRequest{RefundNo: retryNo, OrderNo: "OF-plain", TradeNo: plain,
		AmountCents: 100, TotalCents: 5000}); err != nil || st != pay.RefundSucceeded {
		t.Fatalf("refund: %q %v", st, err)
	}
	b.setClock(at(15, 0))
	dashRef, err := b.fake.DashboardRefund("OF-dash", 300)
	if err != nil {
		t.Fatal(err)
	}
	b.setClock(at(16, 0))
	unseen, err := b.fake.PayUnseen("OF-unseen", 700)
	if err != nil {
		t.Fatal(err)
	}
	b.setClock(time.Date(2026, 3, 11, 0, 0, 1, 0, shanghai))
	b.pay(t, "OF-after", 1000)

	// The times orderflow learns of a payment are the bill's.
	got, err := b.p.QueryPayment(ctx, "OF-unseen", "")
	if err != nil || got == nil || got.TradeNo != unseen || !got.At.Equal(at(16, 0)) {
		t.Fatalf("QueryPayment(OF-unseen) = %+v, %v", got, err)
	}
	b.mu.Lock()
	if p := b.paid[2]; p.OrderNo != "OF-plain" || p.TradeNo != plain || !p.At.Equal(at(10, 0)) {
		t.Errorf("notified payment = %+v, want OF-plain %s at %s", p, plain, at(10, 0))
	}
	b.mu.Unlock()
	if z := b.p.StatementZone(); time.Date(2026, 1, 1, 0, 0, 0, 0, z).Sub(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) != -8*time.Hour {
		t.Errorf("StatementZone() = %v, want UTC+8", z)
	}

	pages, err := b.read(t, "2026-03-10")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 1 {
		t.Fatalf("%d pages, want 1", len(pages))
	}
	dashReq := dashRef[len(dash)+1:]
	want := []pay.StatementLine{
		{Kind: pay.LinePayment, TradeNo: early, OrderNo: "OF-early", Ref: early, AmountCents: 1000, FeeCents: 6, At: at(7, 30)},
		{Kind: pay.LinePayment, TradeNo: plain, OrderNo: "OF-plain", Ref: plain, AmountCents: 5000, FeeCents: 30, At: at(10, 0)},
		{Kind: pay.LinePayment, TradeNo: dash, OrderNo: "OF-dash", Ref: dash, AmountCents: 5000, FeeCents: 30, At: at(11, 0)},
		{Kind: pay.LinePayment, TradeNo: altered, OrderNo: "OF-altered", Ref: altered, AmountCents: 4999, FeeCents: 30, At: at(13, 0)},
		{Kind: pay.LineRefund, TradeNo: plain, OrderNo: "OF-plain", RefundNo: refundNo, Ref: plain + "/" + refundNo, AmountCents: 1200, At: at(14, 0)},
		{Kind: pay.LineRefund, TradeNo: plain, OrderNo: "OF-plain", RefundNo: retryNo, Ref: plain + "/" + retryNo, AmountCents: 100, At: at(14, 30)},
		{Kind: pay.LineRefund, TradeNo: dash, OrderNo: "OF-dash", RefundNo: dashReq, Ref: dash + "/" + dashReq, AmountCents: 300, At: at(15, 0)},
		{Kind: pay.LinePayment, TradeNo: unseen, OrderNo: "OF-unseen", Ref: unseen, AmountCents: 700, FeeCents: 4, At: at(16, 0)},
	}
	if diff := cmp.Diff(want, pages[0]); diff != "" {
		t.Errorf("statement of 2026-03-10 (-want +got):\n%s", diff)
	}
	if dashRef != dash+"/"+dashReq || dashReq == "" {
		t.Errorf("DashboardRefund ref %q", dashRef)
	}
	// The dashboard refund counts in the trade: 4700 more is past it.
	if _, err := b.fake.DashboardRefund("OF-dash", 4701); err == nil {
		t.Error("a dashboard refund past the trade was taken")
	}
}

// A day not over (or not made) is ErrStatementNotReady; a day that is no
// date is an error before anything is asked; a day without trades is an
// empty bill.
func TestStatementNotReadyAndBadDay(t *testing.T) {
	b := setup(t)
	b.setClock(time.Date(2026, 3, 10, 23, 59, 0, 0, shanghai))
	if _, err := b.read(t, "2026-03-10"); !errors.Is(err, pay.ErrStatementNotReady) {
		t.Errorf("today's statement: %v, want ErrStatementNotReady", err)
	}
	for _, day := range []string{"", "2026-3-10", "2026-02-30", "10/03/2026", "2026-03-10T00:00:00Z"} {
		if _, err := b.read(t, day); err == nil || errors.Is(err, pay.ErrStatementNotReady) {
			t.Errorf("statement of %q: %v, want an error", day, err)
		}
	}
	pages, err := b.read(t, "2026-03-09")
	if err != nil || len(pages) != 0 {
		t.Errorf("an empty day: %d pages, %v", len(pages), err)
	}
}

// A day of more lines than a page arrives in pages of at most
// pay.StatementPage, every line once; fn's error stops the read.
func TestStatementPages(t *testing.T) {
	b := setup(t)
	n := 2*pay.StatementPage + 7
	payDay(t, b, n)
	pages, err := b.read(t, "2026-03-10")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range pages {
		if len(p) == 0 || len(p) > pay.StatementPage {
			t.Errorf("a page of %d lines", len(p))
		}
		for _, l := range p {
			seen[l.Ref] = true
		}
	}
	if len(pages) != 3 || len(seen) != n {
		t.Errorf("%d pages, %d distinct lines; want 3 and %d", len(pages), len(seen), n)
	}
	paytest.CheckStatementStops(t, b.p, "2026-03-10")
}

// A spoiled answer (its signature) or a spoiled file (the zip's CRC) is an
// error, and not one line is handed over, even of a day of several pages.
func TestStatementTampered(t *testing.T) {
	b := setup(t)
	payDay(t, b, pay.StatementPage+10)
	for name, sw := range map[string]fake.Switches{
		"answer": {TamperBillAnswer: true},
		"zip":    {CorruptBill: true},
	} {
		t.Run(name, func(t *testing.T) {
			b.fake.Set(sw)
			defer b.fake.Set(fake.Switches{})
			pages, err := b.read(t, "2026-03-10")
			if err == nil || len(pages) != 0 {
				t.Errorf("got %d pages, error %v; want none and an error", len(pages), err)
			}
			t.Logf("error: %v", err)
		})
	}
	if pages, err := b.read(t, "2026-03-10"); err != nil || len(pages) != 2 {
		t.Errorf("untampered: %d pages, %v", len(pages), err)
	}
}

// payDay pays n orders unseen on 2026-03-10 (Beijing), one a second from
// 08:00, and moves the clock to the next morning.
func payDay(t *testing.T, b *bundle, n int) {
	t.Helper()
	start := time.Date(2026, 3, 10, 8, 0, 0, 0, shanghai)
	for i := range n {
		b.setClock(start.Add(time.Duration(i) * time.Second))
		if _, err := b.fake.PayUnseen(fmt.Sprintf("OF-%06d", i), int64(100+i)); err != nil {
			t.Fatal(err)
		}
	}
	b.setClock(start.Add(24 * time.Hour))
}
