package wechat_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/pay/paytest"
	"orderflow/internal/infra/pay/wechat"
	"orderflow/internal/payfake"
	fake "orderflow/internal/payfake/wechat"
)

// bundle is a fake WeChat Pay, the provider pointed at it, and a notify
// endpoint that parses what arrives with the provider and answers in its
// convention.
type bundle struct {
	*paytest.Endpoint
	fake *fake.Fake
	p    *wechat.Provider
}

func setup(t *testing.T, timeout time.Duration) *bundle {
	t.Helper()
	f, err := fake.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	b := &bundle{Endpoint: paytest.NewEndpoint(t), fake: f}
	b.p, err = wechat.New(config(f, b.URL, timeout))
	if err != nil {
		t.Fatal(err)
	}
	b.Use(b.p)
	return b
}

func config(f *fake.Fake, notifyURL string, timeout time.Duration) wechat.Config {
	k := f.Keys
	return wechat.Config{
		MchID: k.MchID, AppID: k.AppID, CertSerial: k.CertSerial, PrivateKey: k.PrivateKey, APIv3Key: k.APIv3Key,
		PlatformPublicKey: k.PlatformPublicKey, PlatformPublicKeyID: k.PlatformPublicKeyID,
		APIURL: f.URL, NotifyURL: notifyURL, Timeout: timeout,
	}
}

func checkout(t *testing.T, b *bundle, orderNo string, cents int64) *pay.Checkout {
	t.Helper()
	return paytest.Checkout(t, b.p, orderNo, cents)
}

func TestCheckoutPayAndNotify(t *testing.T) {
	b := setup(t, 5*time.Second)
	ctx := context.Background()
	co := checkout(t, b, "O1001", 5000)
	if !strings.HasPrefix(co.QRCode, "weixin://wxpay/bizpayurl?pr=") || co.PayURL != "" || co.ClientSecret != "" {
		t.Fatalf("checkout = %+v, want only a weixin:// code_url", co)
	}
	if again := checkout(t, b, "O1001", 5000); again.QRCode != co.QRCode {
		t.Fatalf("repeated checkout code_url %q, want %q", again.QRCode, co.QRCode)
	}
	if paid, err := b.p.QueryPayment(ctx, "O1001", ""); err != nil || paid != nil {
		t.Fatalf("query before paying = %+v, %v; want nil, nil", paid, err)
	}
	if _, err := b.p.QueryPayment(ctx, "O-never", ""); !errors.Is(err, pay.ErrNotFound) {
		t.Fatalf("query of an order never started: %v, want ErrNotFound", err)
	}

	n, status, err := b.fake.Pay(ctx, "O1001")
	if err != nil || status != http.StatusNoContent {
		t.Fatalf("notification answered %d, %v; want 204", status, err)
	}
	ev := b.WaitEvents(t, 1)[0]
	if ev.Paid == nil || ev.Paid.OrderNo != "O1001" || ev.Paid.AmountCents != 5000 || ev.Paid.TradeNo == "" {
		t.Fatalf("parsed %+v, want O1001 paid 5000 with a transaction id", ev.Paid)
	}
	paid, err := b.p.QueryPayment(ctx, "O1001", "")
	if err != nil || paid == nil || *paid != *ev.Paid {
		t.Fatalf("query after paying = %+v, %v; want %+v", paid, err, ev.Paid)
	}

	// Spoiled notifications are refused with WeChat Pay's error object and
	// never parsed.
	mis, err := b.fake.MisSignedNotification("O1001")
	if err != nil {
		t.Fatal(err)
	}
	paytest.CheckSpoiled(t, b.p, map[string]*payfake.Notification{"tampered": &n.Tampered().Notification, "mis-signed": &mis.Notification},
		func(status int) bool { return status/100 != 2 })
	if got := len(b.WaitEvents(t, 1)); got != 1 {
		t.Fatalf("%d notifications parsed, want only the genuine one", got)
	}
}

func TestAnswerConvention(t *testing.T) {
	b := setup(t, time.Second)
	ok := httptest.NewRecorder()
	b.p.Answer(ok, true)
	if ok.Code != http.StatusNoContent {
		t.Errorf("ok answer = %d, want 204", ok.Code)
	}
	bad := httptest.NewRecorder()
	b.p.Answer(bad, false)
	if bad.Code/100 != 5 || !strings.Contains(bad.Body.String(), `"code":"FAIL"`) {
		t.Errorf("refusal = %d %s, want 5xx with code FAIL", bad.Code, bad.Body)
	}
}

func paidOrder(t *testing.T, b *bundle, orderNo string) *pay.Paid {
	t.Helper()
	b.fake.DropPayNotify.Store(true)
	checkout(t, b, orderNo, 5000)
	if _, _, err := b.fake.Pay(context.Background(), orderNo); err != nil {
		t.Fatal(err)
	}
	paid, err := b.p.QueryPayment(context.Background(), orderNo, "")
	if err != nil || paid == nil {
		t.Fatalf("query = %+v, %v; want paid", paid, err)
	}
	return paid
}

func TestRefundQueryAndResend(t *testing.T) {
	b := setup(t, 5*time.Second)
	paid := paidOrder(t, b, "O2001")
	req := pay.RefundRequest{RefundNo: "R2001", OrderNo: "O2001", TradeNo: paid.TradeNo, AmountCents: 5000, TotalCents: 5000}

	paytest.CheckRefundSent(t, b.p, req)
	ev := b.WaitEvents(t, 1)[0]
	if u := ev.Refund; u == nil || u.RefundNo != "R2001" || u.Status != pay.RefundSucceeded || u.TradeNo != paid.TradeNo ||
		u.AmountCents != 5000 || u.Ref != b.fake.RefundID("R2001") || u.At.IsZero() {
		t.Fatalf("refund notification parsed as %+v", ev.Refund)
	}
	// The same out_refund_no again is the same refund, not a second one.
	paytest.CheckRefundResent(t, b.p, req, pay.RefundSucceeded, b.fake.RefundSends, b.fake.Refunds)
}

func TestRefundTimeoutThenQuery(t *testing.T) {
	b := setup(t, 300*time.Millisecond)
	paid := paidOrder(t, b, "O3001")
	b.fake.DropRefundNotify.Store(true)
	b.fake.RefundTimeout.Store(true)
	req := pay.RefundRequest{RefundNo: "R3001", OrderNo: "O3001", TradeNo: paid.TradeNo, AmountCents: 5000, TotalCents: 5000}
	paytest.CheckRefundTimeoutThenQuery(t, b.p, req, b.fake.RefundSends)
}

func TestConfigCheck(t *testing.T) {
	f, err := fake.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	good := config(f, "https://shop.example/api/v1/payments/wechat/notify", 0)
	paytest.CheckConfig(t, good, wechat.Config.Check, "PRIVATE KEY-----", map[string]paytest.ConfigCase[wechat.Config]{
		"no mch id":    {Mutate: func(c *wechat.Config) { c.MchID = "" }, Want: "ORDERFLOW_WECHAT_MCH_ID"},
		"short key":    {Mutate: func(c *wechat.Config) { c.APIv3Key = "short" }, Want: "ORDERFLOW_WECHAT_APIV3_KEY"},
		"bad private":  {Mutate: func(c *wechat.Config) { c.PrivateKey = "not pem" }, Want: "ORDERFLOW_WECHAT_PRIVATE_KEY"},
		"bad platform": {Mutate: func(c *wechat.Config) { c.PlatformPublicKey = f.Keys.PrivateKey }, Want: "ORDERFLOW_WECHAT_PLATFORM_PUBLIC_KEY"},
		"url path":     {Mutate: func(c *wechat.Config) { c.APIURL = "http://127.0.0.1:1/v3" }, Want: "ORDERFLOW_WECHAT_API_URL"},
		"no notify":    {Mutate: func(c *wechat.Config) { c.NotifyURL = "" }, Want: "ORDERFLOW_WECHAT_NOTIFY_URL"},
	})
}
