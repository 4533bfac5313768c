package statements

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"orderflow/internal/infra/pay"
	alipayfake "orderflow/internal/payfake/alipay"
	stripefake "orderflow/internal/payfake/stripe"
	wechatfake "orderflow/internal/payfake/wechat"
	"orderflow/svc"
)

// shanghai is Alipay's and WeChat Pay's calendar (UTC+8 all year).
var shanghai = time.FixedZone("CST", 8*3600)

func TestPaysim(t *testing.T) {
	ctx := context.Background()
	var a *shop
	var mu sync.Mutex
	trades := map[string]string{} // order → trade, as the simulator answered
	keep := func(orderNo, tradeNo string) {
		mu.Lock()
		defer mu.Unlock()
		trades[orderNo] = tradeNo
	}
	p := fakeProvider{
		name:  pay.NamePaysim,
		zone:  time.UTC,
		knobs: simAdmin{t: t, shop: &a, keep: keep},
		pay: func(t *testing.T, orderNo string, cents int64) {
			t.Helper()
			tradeNo, st, err := a.s.Pay.Pay(ctx, orderNo, cents, "")
			if err != nil || st != http.StatusOK {
				t.Fatalf("pay %s at the simulator: status %d, %v", orderNo, st, err)
			}
			keep(orderNo, tradeNo)
		},
		tradeNo: func(orderNo string) string {
			mu.Lock()
			defer mu.Unlock()
			return trades[orderNo]
		},
		refundSends: func(no string) int { return a.s.Sim.Stats().Refunds[no].Calls },
		refundCalls: func() int {
			n := 0
			for _, r := range a.s.Sim.Stats().Refunds {
				n += r.Calls
			}
			return n
		},
		refunded: func(_, tradeNo string) int64 { return a.s.Sim.TradeRefunded(tradeNo) },
	}
	a = startShop(t, p, nil, nil)
	runStatementDay(t, a)
}

func TestAlipay(t *testing.T) {
	ctx := context.Background()
	f, err := alipayfake.New()
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(f.Handler())
	t.Cleanup(func() { gw.Close(); f.Close() })
	keyFile := filepath.Join(t.TempDir(), "app.pem")
	if err := os.WriteFile(keyFile, []byte(f.AppPrivateKey), 0o600); err != nil {
		t.Fatal(err)
	}
	p := fakeProvider{
		name:  pay.NameAlipay,
		zone:  shanghai,
		knobs: f,
		pay: func(t *testing.T, orderNo string, _ int64) {
			t.Helper()
			answers, err := f.Pay(ctx, orderNo, alipayfake.PayOptions{})
			if err != nil || len(answers) != 1 || answers[0].Body != "success" {
				t.Fatalf("pay %s at alipay: %+v, %v", orderNo, answers, err)
			}
		},
		tradeNo:     f.TradeNo,
		refundSends: f.RefundSends,
		refundCalls: func() int { return len(f.Refunded()) },
		refunded:    func(orderNo, _ string) int64 { return f.TradeRefunded(orderNo) },
	}
	a := startShop(t, p, func(c *svc.Config) {
		c.AlipayAppID, c.AlipayPrivateKey, c.AlipayPublicKey = alipayfake.AppID, "@"+keyFile, f.AlipayPublicKey
		c.AlipayGatewayURL = gw.URL
		c.AlipayNotifyURL = "http://127.0.0.1:1/api/v1/payments/alipay/notify" // the fake is told the real one
	}, func(api string) { f.NotifyTo(api + "/api/v1/payments/alipay/notify") })
	runStatementDay(t, a)
}

func TestWechat(t *testing.T) {
	_, p, configure, started := wechatSetup(t)
	runStatementDay(t, startShop(t, p, configure, started))
}

// wechatSetup is a WeChat Pay fake, the suite's view of it, and the
// settings and start hook that point a shop at it.
func wechatSetup(t *testing.T) (*wechatfake.Fake, fakeProvider, func(*svc.Config), func(apiURL string)) {
	t.Helper()
	ctx := context.Background()
	f, err := wechatfake.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	p := fakeProvider{
		name:  pay.NameWechat,
		zone:  shanghai,
		knobs: f,
		pay: func(t *testing.T, orderNo string, _ int64) {
			t.Helper()
			if _, st, err := f.Pay(ctx, orderNo); err != nil || (st != http.StatusOK && st != http.StatusNoContent) {
				t.Fatalf("pay %s at wechat: status %d, %v", orderNo, st, err)
			}
		},
		tradeNo:     f.TradeNo,
		refundSends: f.RefundSends,
		refundCalls: f.Refunds,
		refunded:    func(orderNo, _ string) int64 { return f.OrderRefunded(orderNo) },
	}
	k := f.Keys
	configure := func(c *svc.Config) {
		c.WechatMchID, c.WechatAppID, c.WechatCertSerial = k.MchID, k.AppID, k.CertSerial
		c.WechatPrivateKey, c.WechatAPIv3Key = k.PrivateKey, k.APIv3Key
		c.WechatPlatformPublicKey, c.WechatPlatformPublicKeyID = k.PlatformPublicKey, k.PlatformPublicKeyID
		c.WechatAPIURL = f.URL
		c.WechatNotifyURL = "http://127.0.0.1:1/api/v1/payments/wechat/notify" // the fake is told the real one
	}
	return f, p, configure, func(api string) { f.NotifyTo(api + "/api/v1/payments/wechat/notify") }
}

func TestStripe(t *testing.T) {
	_, p, configure, started := stripeSetup(t)
	runStatementDay(t, startShop(t, p, configure, started))
}

// stripeSetup is a Stripe fake, the suite's view of it, and the settings
// and start hook that point a shop at it.
func stripeSetup(t *testing.T) (*stripefake.Fake, fakeProvider, func(*svc.Config), func(apiURL string)) {
	t.Helper()
	ctx := context.Background()
	f := stripefake.New()
	t.Cleanup(f.Close)
	p := fakeProvider{
		name:  pay.NameStripe,
		zone:  time.UTC,
		knobs: f,
		pay: func(t *testing.T, orderNo string, _ int64) {
			t.Helper()
			if _, st, err := f.Pay(ctx, orderNo); err != nil || st/100 != 2 {
				t.Fatalf("pay %s at stripe: status %d, %v", orderNo, st, err)
			}
		},
		tradeNo:     f.IntentID,
		refundSends: f.RefundSends,
		refundCalls: f.Refunds,
		refunded:    func(_, tradeNo string) int64 { return f.IntentRefunded(tradeNo) },
	}
	configure := func(c *svc.Config) {
		c.StripeSecretKey, c.StripeWebhookSecret, c.StripeAPIURL = f.SecretKey, f.WebhookSecret, f.URL
	}
	return f, p, configure, func(api string) { f.SetWebhookURL(api + "/api/v1/payments/stripe/webhook") }
}

// simAdmin is the simulator's statement knobs through its admin routes, as
// a harness running it as its own process would; the clock is set in
// process (the shop's simulator).
type simAdmin struct {
	t    *testing.T
	shop **shop
	keep func(orderNo, tradeNo string) // the trades paid unseen, for the test's lookups
}

func (k simAdmin) SetClock(now func() time.Time) { (*k.shop).s.Sim.SetClock(now) }

func (k simAdmin) StatementDrop(ref string) {
	if err := (*k.shop).s.Pay.StatementDrop(context.Background(), ref); err != nil {
		k.t.Fatal(err)
	}
}

func (k simAdmin) StatementAlter(ref string, cents int64) {
	if err := (*k.shop).s.Pay.StatementAlter(context.Background(), ref, cents); err != nil {
		k.t.Fatal(err)
	}
}

func (k simAdmin) DashboardRefund(orderNo string, cents int64) (string, error) {
	return (*k.shop).s.Pay.DashboardRefund(context.Background(), orderNo, cents)
}

func (k simAdmin) PayUnseen(orderNo string, cents int64) (string, error) {
	tradeNo, err := (*k.shop).s.Pay.PayUnseen(context.Background(), orderNo, cents)
	k.keep(orderNo, tradeNo)
	return tradeNo, err
}
