package payments

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"orderflow/internal/domain/refund"
	"orderflow/internal/infra/pay"
	fake "orderflow/internal/payfake/alipay"
	"orderflow/internal/testenv"
	"orderflow/svc"
)

// alipayShop is a stack with Alipay enabled against the fake, the worker
// binary running, a card product and a buyer.
type alipayShop struct {
	s     *testenv.Stack
	f     *fake.Fake
	buyer *testenv.Client
	pid   int64
}

func startAlipay(t *testing.T) *alipayShop {
	t.Helper()
	f, fs := testenv.StartAlipayFake(t)
	s := testenv.Start(t, testenv.Options{NoWorker: true, Configure: func(c *svc.Config) {
		c.PayProviders = "paysim,alipay"
		fs.Configure(c)
		c.OrderTTL = svc.Duration(4 * time.Second)
		c.PayQueryAfter = svc.Duration(300 * time.Millisecond)
	}})
	fs.Started(s.APIURL)
	testenv.StartChildWorker(t, testenv.Binary("queue"), s.Config, "")
	s.WaitReconciled(t, 30*time.Second)
	_, buyer := s.NewUser(t, "ann", 0)
	return &alipayShop{s: s, f: f, buyer: buyer, pid: s.NewCardProduct(t, "steam-50", 5000, 20)}
}

type checkoutView struct {
	Provider  string    `json:"provider"`
	OrderNo   string    `json:"order_no"`
	ExpiresAt time.Time `json:"expires_at"`
	QRCode    string    `json:"qr_code"`
	PayURL    string    `json:"pay_url"`
}

// order creates an order and checks it out at Alipay.
func (a *alipayShop) order(t *testing.T) (testenv.OrderView, checkoutView) {
	t.Helper()
	o := a.buyer.CreateOrder(t, a.pid, 1)
	var c checkoutView
	if st := a.buyer.Do(t, "POST", "/api/v1/orders/"+o.OrderNo+"/pay", map[string]string{"provider": "alipay"}, &c); st != 200 {
		t.Fatalf("checkout: status %d", st)
	}
	return o, c
}

func (a *alipayShop) waitStatus(t *testing.T, orderNo, want string) {
	t.Helper()
	testenv.Eventually(t, 20*time.Second, "order "+orderNo+" "+want, func() (bool, error) {
		return a.buyer.Order(t, orderNo).Status == want, nil
	})
}

func TestAlipay(t *testing.T) {
	a := startAlipay(t)
	ctx := context.Background()

	t.Run("checkout returns one QR payment, good until the order's expiry", func(t *testing.T) {
		o, c := a.order(t)
		if c.Provider != "alipay" || c.OrderNo != o.OrderNo || !strings.HasPrefix(c.QRCode, "https://qr.alipay.com/") || c.PayURL != "" {
			t.Fatalf("checkout = %+v", c)
		}
		row := a.s.OrderRow(t, o.OrderNo)
		if c.ExpiresAt.After(row.ExpireAt) {
			t.Errorf("expires_at %s is past the order's expiry %s", c.ExpiresAt, row.ExpireAt)
		}
		var again checkoutView
		a.buyer.Do(t, "POST", "/api/v1/orders/"+o.OrderNo+"/pay", map[string]string{"provider": "alipay"}, &again)
		if again.QRCode != c.QRCode {
			t.Errorf("a repeated checkout started another payment: %q, then %q", c.QRCode, again.QRCode)
		}
		var sim checkoutView
		if st := a.buyer.Do(t, "POST", "/api/v1/orders/"+o.OrderNo+"/pay", map[string]string{"provider": "paysim"}, &sim); st != 200 || sim.PayURL == "" {
			t.Errorf("a second provider for the same order: status %d, %+v", st, sim)
		}
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		if st := a.buyer.Do(t, "POST", "/api/v1/orders/"+o.OrderNo+"/pay", map[string]string{"provider": "stripe"}, &e); st != 400 || e.Error.Code != "unknown_provider" {
			t.Errorf("a provider not enabled: status %d, code %q; want 400 unknown_provider", st, e.Error.Code)
		}
	})

	t.Run("the simulator's pay URL pays the order", func(t *testing.T) {
		o := a.buyer.CreateOrder(t, a.pid, 1)
		var c checkoutView
		if st := a.buyer.Do(t, "POST", "/api/v1/orders/"+o.OrderNo+"/pay", map[string]string{"provider": "paysim"}, &c); st != 200 {
			t.Fatalf("checkout: status %d", st)
		}
		resp, err := http.Get(c.PayURL)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET pay_url: status %d", resp.StatusCode)
		}
		a.waitStatus(t, o.OrderNo, "finished")
	})

	t.Run("the same signed notification 10 times at once delivers once", func(t *testing.T) {
		o, _ := a.order(t)
		answers, err := a.f.Pay(ctx, o.OrderNo, fake.PayOptions{Times: 10})
		if err != nil {
			t.Fatal(err)
		}
		for i, ans := range answers {
			if ans.Err != nil || ans.Status != http.StatusOK || ans.Body != "success" {
				t.Errorf("notification %d: %+v, want 200 success", i, ans)
			}
		}
		a.waitStatus(t, o.OrderNo, "finished")
		got := a.buyer.Order(t, o.OrderNo)
		if len(got.Cards) != 1 || got.TradeNo == nil || *got.TradeNo != a.f.TradeNo(o.OrderNo) {
			t.Errorf("finished order: cards %d, trade %v; want 1 card, Alipay's trade %s", len(got.Cards), got.TradeNo, a.f.TradeNo(o.OrderNo))
		}
		if n := a.s.Count(t, "SELECT COUNT(*) FROM payments WHERE order_id = ?", a.s.OrderRow(t, o.OrderNo).ID); n != 1 {
			t.Errorf("%d payment rows, want 1", n)
		}
	})

	t.Run("a tampered notification is refused with fail and changes nothing", func(t *testing.T) {
		o, _ := a.order(t)
		answers, err := a.f.Pay(ctx, o.OrderNo, fake.PayOptions{Tamper: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(answers) != 1 || answers[0].Body != "fail" {
			t.Fatalf("tampered notification answered %+v, want fail", answers)
		}
		if got := a.buyer.Order(t, o.OrderNo); got.Status != "pending" {
			t.Errorf("order %s after a tampered notification, want pending", got.Status)
		}
		if n := a.s.Count(t, "SELECT COUNT(*) FROM payments WHERE order_id = ?", a.s.OrderRow(t, o.OrderNo).ID); n != 0 {
			t.Errorf("%d payment rows, want 0", n)
		}
	})

	t.Run("a payment whose notification is lost is found by the query and delivered", func(t *testing.T) {
		a.f.Set(fake.Switches{DropPaymentNotify: true})
		defer a.f.Set(fake.Switches{})
		o, _ := a.order(t)
		if _, err := a.f.Pay(ctx, o.OrderNo, fake.PayOptions{}); err != nil {
			t.Fatal(err)
		}
		a.waitStatus(t, o.OrderNo, "finished")
		if got := a.buyer.Order(t, o.OrderNo); got.TradeNo == nil || *got.TradeNo != a.f.TradeNo(o.OrderNo) {
			t.Errorf("trade %v, want Alipay's %s", got.TradeNo, a.f.TradeNo(o.OrderNo))
		}
	})

	// A late payment after the close is refunded through Alipay once.
	late := func(t *testing.T, sw fake.Switches) {
		o, _ := a.order(t)
		a.waitStatus(t, o.OrderNo, "closed")
		a.f.Set(sw)
		defer a.f.Set(fake.Switches{})
		answers, err := a.f.Pay(ctx, o.OrderNo, fake.PayOptions{})
		if err != nil || len(answers) != 1 || answers[0].Body != "success" {
			t.Fatalf("late payment answered %+v, %v", answers, err)
		}
		a.waitStatus(t, o.OrderNo, "refunded")
		no := refund.NumberAt(pay.NameAlipay, o.OrderNo, a.f.TradeNo(o.OrderNo))
		if n := a.f.RefundSends(no); n != 1 {
			t.Errorf("alipay.trade.refund called %d times with out_request_no %s, want once", n, no)
		}
	}
	t.Run("a late payment is refunded once, confirmed by query when the callback is dropped", func(t *testing.T) {
		late(t, fake.Switches{DropRefundNotify: true, RefundInProgress: true})
	})
	t.Run("a refund call that times out is queried, never sent twice", func(t *testing.T) {
		late(t, fake.Switches{DropRefundNotify: true, TimeoutRefunds: 1})
	})
	runPartialRefunds(t, &refundShop{s: a.s, buyer: a.buyer, pid: a.pid, f: refundFake{
		name: pay.NameAlipay,
		paid: func(t *testing.T, orderNo string) {
			if st := a.buyer.Do(t, "POST", "/api/v1/orders/"+orderNo+"/pay", map[string]string{"provider": "alipay"}, nil); st != 200 {
				t.Fatalf("checkout: status %d", st)
			}
			if _, err := a.f.Pay(ctx, orderNo, fake.PayOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		sends:    a.f.RefundSends,
		refunded: func(orderNo, _ string) int64 { return a.f.TradeRefunded(orderNo) },
	}})
}
