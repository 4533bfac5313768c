package stripe_test

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
	"orderflow/internal/infra/pay/stripe"
	"orderflow/internal/payfake"
	fake "orderflow/internal/payfake/stripe"
)

// bundle is a fake Stripe, the provider pointed at it, and a webhook
// endpoint that parses what arrives with the provider and answers in its
// convention.
type bundle struct {
	*paytest.Endpoint
	fake *fake.Fake
	p    *stripe.Provider
}

func setup(t *testing.T, timeout time.Duration) *bundle {
	t.Helper()
	f := fake.New()
	t.Cleanup(f.Close)
	b := &bundle{Endpoint: paytest.NewEndpoint(t), fake: f}
	f.SetWebhookURL(b.URL)
	var err error
	b.p, err = stripe.New(stripe.Config{SecretKey: f.SecretKey, WebhookSecret: f.WebhookSecret,
		APIURL: f.URL, Currency: "cny", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	b.Use(b.p)
	return b
}

func checkout(t *testing.T, b *bundle, orderNo string) *pay.Checkout {
	t.Helper()
	return paytest.Checkout(t, b.p, orderNo, 5000)
}

func TestCheckoutPayAndWebhook(t *testing.T) {
	b := setup(t, 5*time.Second)
	ctx := context.Background()
	co := checkout(t, b, "O1001")
	if !strings.HasPrefix(co.Ref, "pi_") || !strings.HasPrefix(co.ClientSecret, co.Ref+"_secret_") || co.QRCode != "" || co.PayURL != "" {
		t.Fatalf("checkout = %+v, want a PaymentIntent id and its client_secret", co)
	}
	if again := checkout(t, b, "O1001"); again.Ref != co.Ref || again.ClientSecret != co.ClientSecret {
		t.Fatalf("repeated checkout gave %s, want the same intent %s", again.Ref, co.Ref)
	}
	for _, ref := range []string{co.Ref, ""} {
		if paid, err := b.p.QueryPayment(ctx, "O1001", ref); err != nil || paid != nil {
			t.Fatalf("query (ref %q) before paying = %+v, %v; want nil, nil", ref, paid, err)
		}
	}
	if _, err := b.p.QueryPayment(ctx, "O-never", ""); !errors.Is(err, pay.ErrNotFound) {
		t.Fatalf("search for an order never started: %v, want ErrNotFound", err)
	}
	if _, err := b.p.QueryPayment(ctx, "O-never", "pi_missing"); !errors.Is(err, pay.ErrNotFound) {
		t.Fatalf("retrieve of an unknown intent: %v, want ErrNotFound", err)
	}

	// The intent was created at checkout; its charge, the payment's time,
	// comes later (on another day, here).
	paidAt := time.Now().Add(30 * time.Hour).UTC().Truncate(time.Second)
	b.fake.SetClock(func() time.Time { return paidAt })
	n, status, err := b.fake.Pay(ctx, "O1001")
	if err != nil || status != http.StatusOK {
		t.Fatalf("webhook answered %d, %v; want 200", status, err)
	}
	want := pay.Paid{OrderNo: "O1001", TradeNo: co.Ref, AmountCents: 5000, At: paidAt}
	if ev := b.WaitEvents(t, 1)[0]; ev.Paid == nil || *ev.Paid != want {
		t.Fatalf("parsed %+v, want %+v (At the charge's time)", ev.Paid, want)
	}
	for _, ref := range []string{co.Ref, ""} {
		if paid, err := b.p.QueryPayment(ctx, "O1001", ref); err != nil || paid == nil || *paid != want {
			t.Fatalf("query (ref %q) after paying = %+v, %v; want %+v", ref, paid, err, want)
		}
	}

	mis, err := b.fake.MisSignedNotification(co.Ref)
	if err != nil {
		t.Fatal(err)
	}
	paytest.CheckSpoiled(t, b.p, map[string]*payfake.Notification{"tampered": &n.Tampered().Notification, "mis-signed": &mis.Notification},
		func(status int) bool { return status == http.StatusBadRequest })
	if got := len(b.WaitEvents(t, 1)); got != 1 {
		t.Fatalf("%d webhooks parsed, want only the genuine one", got)
	}
}

func paidIntent(t *testing.T, b *bundle, orderNo string) string {
	t.Helper()
	b.fake.DropPayNotify.Store(true)
	co := checkout(t, b, orderNo)
	if _, _, err := b.fake.Pay(context.Background(), orderNo); err != nil {
		t.Fatal(err)
	}
	return co.Ref
}

func TestRefundQueryAndResend(t *testing.T) {
	b := setup(t, 5*time.Second)
	pi := paidIntent(t, b, "O2001")
	req := pay.RefundRequest{RefundNo: "R2001", OrderNo: "O2001", TradeNo: pi, AmountCents: 5000, TotalCents: 5000}

	paytest.CheckRefundSent(t, b.p, req) // pending at Stripe
	ev := b.WaitEvents(t, 1)[0]
	if u := ev.Refund; u == nil || u.RefundNo != "R2001" || u.Status != pay.RefundSucceeded || u.TradeNo != pi ||
		u.AmountCents != 5000 || !strings.HasPrefix(u.Ref, "re_") || u.At.IsZero() {
		t.Fatalf("refund webhook parsed as %+v", ev.Refund)
	}
	// The same Idempotency-Key replays the first answer: no second refund.
	paytest.CheckRefundResent(t, b.p, req, "", b.fake.RefundSends, b.fake.Refunds)
}

func TestRefundTimeoutThenQuery(t *testing.T) {
	b := setup(t, 300*time.Millisecond)
	pi := paidIntent(t, b, "O3001")
	b.fake.DropRefundNotify.Store(true)
	b.fake.RefundTimeout.Store(true)
	req := pay.RefundRequest{RefundNo: "R3001", OrderNo: "O3001", TradeNo: pi, AmountCents: 5000, TotalCents: 5000}
	paytest.CheckRefundTimeoutThenQuery(t, b.p, req, b.fake.RefundSends)
}

func TestAnswerAndConfigCheck(t *testing.T) {
	b := setup(t, time.Second)
	ok := httptest.NewRecorder()
	b.p.Answer(ok, true)
	bad := httptest.NewRecorder()
	b.p.Answer(bad, false)
	if ok.Code != http.StatusOK || bad.Code/100 != 4 {
		t.Errorf("answers %d / %d, want 200 / 4xx", ok.Code, bad.Code)
	}
	good := stripe.Config{SecretKey: "sk_test_x", WebhookSecret: "whsec_x", Currency: "cny"}
	paytest.CheckConfig(t, good, stripe.Config.Check, "pk_test_x", map[string]paytest.ConfigCase[stripe.Config]{
		"no key":         {Mutate: func(c *stripe.Config) { c.SecretKey = "" }, Want: "ORDERFLOW_STRIPE_SECRET_KEY"},
		"publishable":    {Mutate: func(c *stripe.Config) { c.SecretKey = "pk_test_x" }, Want: "ORDERFLOW_STRIPE_SECRET_KEY"},
		"no hook secret": {Mutate: func(c *stripe.Config) { c.WebhookSecret = "" }, Want: "ORDERFLOW_STRIPE_WEBHOOK_SECRET"},
		"currency":       {Mutate: func(c *stripe.Config) { c.Currency = "CNY" }, Want: "ORDERFLOW_CURRENCY"},
		"url":            {Mutate: func(c *stripe.Config) { c.APIURL = "ftp://x" }, Want: "ORDERFLOW_STRIPE_API_URL"},
	})
}
