package wechat_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/pay/wechat"
	fake "orderflow/internal/payfake/wechat"
)

// bundle is a fake WeChat Pay, the provider pointed at it, and a notify
// endpoint that parses what arrives with the provider and answers in its
// convention.
type bundle struct {
	fake *fake.Fake
	p    *wechat.Provider

	mu     sync.Mutex
	events []*pay.Event
}

func setup(t *testing.T, timeout time.Duration) *bundle {
	t.Helper()
	f, err := fake.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	b := &bundle{fake: f}
	notifySrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ev, err := b.p.Parse(r, body)
		if err == nil {
			b.mu.Lock()
			b.events = append(b.events, ev)
			b.mu.Unlock()
		}
		b.p.Answer(w, err == nil)
	}))
	t.Cleanup(notifySrv.Close)
	b.p, err = wechat.New(config(f, notifySrv.URL, timeout))
	if err != nil {
		t.Fatal(err)
	}
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

func (b *bundle) waitEvents(t *testing.T, n int) []*pay.Event {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b.mu.Lock()
		got := append([]*pay.Event(nil), b.events...)
		b.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d notifications, want %d", len(got), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func checkout(t *testing.T, b *bundle, orderNo string, cents int64) *pay.Checkout {
	t.Helper()
	co, err := b.p.Checkout(context.Background(), pay.CheckoutRequest{
		OrderNo: orderNo, AmountCents: cents, Subject: "steam-50", ExpiresAt: time.Now().Add(15 * time.Minute),
	})
	if err != nil {
		t.Fatal(err)
	}
	return co
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
	ev := b.waitEvents(t, 1)[0]
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
	for name, spoiled := range map[string]*fake.Notification{"tampered": n.Tampered(), "mis-signed": mis} {
		req := httptest.NewRequest(http.MethodPost, "/", nil)
		req.Header = spoiled.Header
		if _, err := b.p.Parse(req, spoiled.Body); !errors.Is(err, pay.ErrBadSignature) {
			t.Errorf("%s: Parse = %v, want ErrBadSignature", name, err)
		}
		status, err := spoiled.Send(ctx)
		if err != nil || status/100 == 2 {
			t.Errorf("%s: answered %d, %v; want a refusal", name, status, err)
		}
	}
	if got := len(b.waitEvents(t, 1)); got != 1 {
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
	ctx := context.Background()
	paid := paidOrder(t, b, "O2001")
	req := pay.RefundRequest{RefundNo: "R2001", OrderNo: "O2001", TradeNo: paid.TradeNo, AmountCents: 5000, TotalCents: 5000}

	if _, err := b.p.QueryRefund(ctx, req); !errors.Is(err, pay.ErrNotFound) {
		t.Fatalf("query before sending: %v, want ErrNotFound", err)
	}
	status, err := b.p.Refund(ctx, req)
	if err != nil || status != pay.RefundProcessing {
		t.Fatalf("refund = %q, %v; want processing", status, err)
	}
	ev := b.waitEvents(t, 1)[0]
	if u := ev.Refund; u == nil || u.RefundNo != "R2001" || u.Status != pay.RefundSucceeded || u.TradeNo != paid.TradeNo ||
		u.AmountCents != 5000 || u.Ref != b.fake.RefundID("R2001") || u.At.IsZero() {
		t.Fatalf("refund notification parsed as %+v", ev.Refund)
	}
	if status, err := b.p.QueryRefund(ctx, req); err != nil || status != pay.RefundSucceeded {
		t.Fatalf("query = %q, %v; want succeeded", status, err)
	}
	// The same out_refund_no again is the same refund, not a second one.
	if status, err := b.p.Refund(ctx, req); err != nil || status != pay.RefundSucceeded {
		t.Fatalf("re-sent refund = %q, %v; want the existing, succeeded", status, err)
	}
	if sends, held := b.fake.RefundSends("R2001"), b.fake.Refunds(); sends != 2 || held != 1 {
		t.Fatalf("fake got %d sends and holds %d refunds; want 2 sends of 1 refund", sends, held)
	}
}

func TestRefundTimeoutThenQuery(t *testing.T) {
	b := setup(t, 300*time.Millisecond)
	ctx := context.Background()
	paid := paidOrder(t, b, "O3001")
	b.fake.DropRefundNotify.Store(true)
	b.fake.RefundTimeout.Store(true)
	req := pay.RefundRequest{RefundNo: "R3001", OrderNo: "O3001", TradeNo: paid.TradeNo, AmountCents: 5000, TotalCents: 5000}
	if _, err := b.p.Refund(ctx, req); err == nil {
		t.Fatal("refund whose answer never came returned no error")
	}
	if status, err := b.p.QueryRefund(ctx, req); err != nil || status != pay.RefundSucceeded {
		t.Fatalf("query after the timeout = %q, %v; want succeeded", status, err)
	}
	if sends := b.fake.RefundSends("R3001"); sends != 1 {
		t.Fatalf("fake got %d refund sends, want 1", sends)
	}
}

func TestConfigCheck(t *testing.T) {
	f, err := fake.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	good := config(f, "https://shop.example/api/v1/payments/wechat/notify", 0)
	if err := good.Check(); err != nil {
		t.Fatalf("good config: %v", err)
	}
	for name, tc := range map[string]struct {
		mutate func(*wechat.Config)
		want   string
	}{
		"no mch id":    {func(c *wechat.Config) { c.MchID = "" }, "ORDERFLOW_WECHAT_MCH_ID"},
		"short key":    {func(c *wechat.Config) { c.APIv3Key = "short" }, "ORDERFLOW_WECHAT_APIV3_KEY"},
		"bad private":  {func(c *wechat.Config) { c.PrivateKey = "not pem" }, "ORDERFLOW_WECHAT_PRIVATE_KEY"},
		"bad platform": {func(c *wechat.Config) { c.PlatformPublicKey = f.Keys.PrivateKey }, "ORDERFLOW_WECHAT_PLATFORM_PUBLIC_KEY"},
		"url path":     {func(c *wechat.Config) { c.APIURL = "http://127.0.0.1:1/v3" }, "ORDERFLOW_WECHAT_API_URL"},
		"no notify":    {func(c *wechat.Config) { c.NotifyURL = "" }, "ORDERFLOW_WECHAT_NOTIFY_URL"},
	} {
		c := good
		tc.mutate(&c)
		err := c.Check()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %s", name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "PRIVATE KEY-----") {
			t.Errorf("%s: the error carries key material", name)
		}
	}
}
