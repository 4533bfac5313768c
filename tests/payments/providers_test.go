package payments

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"orderflow/internal/domain/refund"
	"orderflow/internal/infra/pay"
	stripefake "orderflow/internal/payfake/stripe"
	wechatfake "orderflow/internal/payfake/wechat"
	"orderflow/internal/testenv"
	"orderflow/svc"
)

// wire is one notification as the provider would POST it.
type wire struct {
	URL    string
	Header http.Header
	Body   []byte
}

// post sends w and returns the answer's status and body.
func (w wire) post(t *testing.T) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, w.URL, bytes.NewReader(w.Body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = w.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// fakeProvider drives one provider's fake the same way for every test.
type fakeProvider struct {
	name string
	// pay marks the order paid at the provider and, unless drop, sends the
	// payment notification; it returns that notification.
	pay func(ctx context.Context, orderNo string, drop bool) (wire, error)
	// forged is a payment notification for an unpaid order, tampered
	// after signing or (misSign) signed with the wrong key.
	forged      func(orderNo string, misSign bool) (wire, error)
	tradeNo     func(orderNo string) string
	refundSends func(refundNo string) int
	// refunds sets the refund switches: drop the refund callback, time the
	// refund call out after recording it.
	refunds func(dropCallback, timeout bool)
	// accepted and refused are the provider's answer convention.
	accepted func(status int, body string) bool
	refused  func(status int, body string) bool
	// checkout checks the checkout answer carries what the buyer's page needs.
	checkout func(a payAnswer) bool
}

// payAnswer is the checkout answer with every provider's field.
type payAnswer struct {
	checkoutView
	ClientSecret string `json:"client_secret"`
}

// providerShop is a stack with one real-protocol provider enabled against
// its fake, the worker binary running, a card product and a buyer.
type providerShop struct {
	s     *testenv.Stack
	p     fakeProvider
	buyer *testenv.Client
	pid   int64
}

// startProviderShop boots the stack pointed at the provider's fake.
func startProviderShop(t *testing.T, p fakeProvider, fs testenv.FakeShop) *providerShop {
	t.Helper()
	s := testenv.Start(t, testenv.Options{NoWorker: true, Configure: func(c *svc.Config) {
		c.PayProviders = "paysim," + p.name
		c.OrderTTL = svc.Duration(4 * time.Second)
		c.PayQueryAfter = svc.Duration(300 * time.Millisecond)
		c.PayTimeout = svc.Duration(time.Second) // the refund-timeout test waits this long
		fs.Configure(c)
	}})
	fs.Started(s.APIURL)
	testenv.StartChildWorker(t, testenv.Binary("queue"), s.Config, "")
	s.WaitReconciled(t, 30*time.Second)
	_, buyer := s.NewUser(t, "ann", 0)
	return &providerShop{s: s, p: p, buyer: buyer, pid: s.NewCardProduct(t, "steam-50", 5000, 20)}
}

func (a *providerShop) order(t *testing.T) (testenv.OrderView, payAnswer) {
	t.Helper()
	o := a.buyer.CreateOrder(t, a.pid, 1)
	var c payAnswer
	if st := a.buyer.Do(t, "POST", "/api/v1/orders/"+o.OrderNo+"/pay", map[string]string{"provider": a.p.name}, &c); st != 200 {
		t.Fatalf("checkout: status %d", st)
	}
	return o, c
}

// refundShop is the operator-refund suite's view of the shop; refunded is
// what the fake returned of an order's payment.
func (a *providerShop) refundShop(refunded func(orderNo string) int64) *refundShop {
	return &refundShop{s: a.s, buyer: a.buyer, pid: a.pid, f: refundFake{
		name: a.p.name,
		paid: func(t *testing.T, orderNo string) {
			t.Helper()
			if st := a.buyer.Do(t, "POST", "/api/v1/orders/"+orderNo+"/pay", map[string]string{"provider": a.p.name}, nil); st != 200 {
				t.Fatalf("checkout: status %d", st)
			}
			if _, err := a.p.pay(context.Background(), orderNo, false); err != nil {
				t.Fatal(err)
			}
		},
		sends:    a.p.refundSends,
		refunded: func(orderNo, _ string) int64 { return refunded(orderNo) },
	}}
}

func (a *providerShop) waitStatus(t *testing.T, orderNo, want string) {
	t.Helper()
	testenv.Eventually(t, 20*time.Second, "order "+orderNo+" "+want, func() (bool, error) {
		return a.buyer.Order(t, orderNo).Status == want, nil
	})
}

func (a *providerShop) payments(t *testing.T, orderNo string) int64 {
	t.Helper()
	return a.s.Count(t, "SELECT COUNT(*) FROM payments WHERE order_id = ?", a.s.OrderRow(t, orderNo).ID)
}

// delivered checks the order finished once, on the provider's trade.
func (a *providerShop) delivered(t *testing.T, orderNo string) {
	t.Helper()
	a.waitStatus(t, orderNo, "finished")
	got := a.buyer.Order(t, orderNo)
	if want := a.p.tradeNo(orderNo); len(got.Cards) != 1 || got.TradeNo == nil || *got.TradeNo != want {
		t.Errorf("finished order: cards %d, trade %v; want 1 card, the provider's trade %s", len(got.Cards), got.TradeNo, want)
	}
	if n := a.payments(t, orderNo); n != 1 {
		t.Errorf("%d payment rows, want 1", n)
	}
}

// runProviderSuite is the end-to-end suite every real-protocol provider passes.
func runProviderSuite(t *testing.T, a *providerShop) {
	ctx := context.Background()

	t.Run("checkout answers what the buyer's page needs, the same payment when repeated", func(t *testing.T) {
		o, c := a.order(t)
		if c.Provider != a.p.name || c.OrderNo != o.OrderNo || !a.p.checkout(c) {
			t.Fatalf("checkout = %+v", c)
		}
		if row := a.s.OrderRow(t, o.OrderNo); c.ExpiresAt.After(row.ExpireAt) {
			t.Errorf("expires_at %s is past the order's expiry %s", c.ExpiresAt, row.ExpireAt)
		}
		var again payAnswer
		a.buyer.Do(t, "POST", "/api/v1/orders/"+o.OrderNo+"/pay", map[string]string{"provider": a.p.name}, &again)
		if again != c {
			t.Errorf("a repeated checkout started another payment: %+v, then %+v", c, again)
		}
	})

	t.Run("checkout, signed notification, delivered once", func(t *testing.T) {
		o, _ := a.order(t)
		n, err := a.p.pay(ctx, o.OrderNo, true)
		if err != nil {
			t.Fatal(err)
		}
		if st, body := n.post(t); !a.p.accepted(st, body) {
			t.Fatalf("notification answered %d %q", st, body)
		}
		a.delivered(t, o.OrderNo)
	})

	t.Run("the same signed notification 10 times at once delivers once", func(t *testing.T) {
		o, _ := a.order(t)
		n, err := a.p.pay(ctx, o.OrderNo, true)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		answers := make([]string, 10)
		for i := range answers {
			wg.Go(func() {
				st, body := n.post(t)
				if !a.p.accepted(st, body) {
					answers[i] = body
				}
			})
		}
		wg.Wait()
		for i, bad := range answers {
			if bad != "" {
				t.Errorf("notification %d refused: %q", i, bad)
			}
		}
		a.delivered(t, o.OrderNo)
	})

	t.Run("tampered and mis-signed notifications are refused and change nothing", func(t *testing.T) {
		o, _ := a.order(t)
		for _, misSign := range []bool{false, true} {
			n, err := a.p.forged(o.OrderNo, misSign)
			if err != nil {
				t.Fatal(err)
			}
			if st, body := n.post(t); !a.p.refused(st, body) {
				t.Errorf("forged notification (mis-signed %v) answered %d %q, want a refusal", misSign, st, body)
			}
		}
		if got := a.buyer.Order(t, o.OrderNo); got.Status != "pending" {
			t.Errorf("order %s after forged notifications, want pending", got.Status)
		}
		if n := a.payments(t, o.OrderNo); n != 0 {
			t.Errorf("%d payment rows, want 0", n)
		}
	})

	t.Run("a payment whose notification is lost is found by the query and delivered", func(t *testing.T) {
		o, _ := a.order(t)
		if _, err := a.p.pay(ctx, o.OrderNo, true); err != nil {
			t.Fatal(err)
		}
		a.delivered(t, o.OrderNo)
	})

	late := func(t *testing.T, timeout bool) {
		o, _ := a.order(t)
		a.waitStatus(t, o.OrderNo, "closed")
		a.p.refunds(true, timeout)
		defer a.p.refunds(false, false)
		n, err := a.p.pay(ctx, o.OrderNo, true)
		if err != nil {
			t.Fatal(err)
		}
		if st, body := n.post(t); !a.p.accepted(st, body) {
			t.Fatalf("late payment answered %d %q", st, body)
		}
		a.waitStatus(t, o.OrderNo, "refunded")
		no := refund.NumberAt(a.p.name, o.OrderNo, a.p.tradeNo(o.OrderNo))
		if n := a.p.refundSends(no); n != 1 {
			t.Errorf("the refund API was called %d times with key %s, want once", n, no)
		}
	}
	t.Run("a late payment is refunded once, confirmed by query when the callback is dropped", func(t *testing.T) {
		late(t, false)
	})
	t.Run("a refund call that times out is queried, never sent twice", func(t *testing.T) {
		late(t, true)
	})
}

func TestWechat(t *testing.T) {
	f, fs := testenv.StartWechatFake(t)
	p := notifyingProvider(f, fakeSwitches{&f.DropPayNotify, &f.DropRefundNotify, &f.RefundTimeout},
		func(n *wechatfake.Notification) wire { return wire{n.URL, n.Header, n.Body} })
	p.name, p.tradeNo = pay.NameWechat, f.TradeNo
	p.accepted = func(st int, _ string) bool { return st == http.StatusOK || st == http.StatusNoContent }
	p.refused = func(st int, body string) bool {
		return st >= 400 && strings.Contains(body, `"code":"FAIL"`)
	}
	p.checkout = func(c payAnswer) bool {
		return strings.HasPrefix(c.QRCode, "weixin://wxpay/bizpayurl?pr=") && c.PayURL == "" && c.ClientSecret == ""
	}
	a := startProviderShop(t, p, fs)
	runProviderSuite(t, a)
	runPartialRefunds(t, a.refundShop(f.OrderRefunded))
}

func TestStripe(t *testing.T) {
	f, fs := testenv.StartStripeFake(t)
	p := notifyingProvider(f, fakeSwitches{&f.DropPayNotify, &f.DropRefundNotify, &f.RefundTimeout},
		func(n *stripefake.Notification) wire { return wire{n.URL, n.Header, n.Body} })
	p.name, p.tradeNo = pay.NameStripe, f.IntentID
	p.accepted = func(st int, _ string) bool { return st/100 == 2 }
	p.refused = func(st int, _ string) bool { return st/100 == 4 }
	p.checkout = func(c payAnswer) bool {
		return strings.HasPrefix(c.ClientSecret, "pi_") && strings.Contains(c.ClientSecret, "_secret_") && c.QRCode == "" && c.PayURL == ""
	}
	a := startProviderShop(t, p, fs)
	runProviderSuite(t, a)
	runPartialRefunds(t, a.refundShop(func(orderNo string) int64 { return f.IntentRefunded(f.IntentID(orderNo)) }))
}
