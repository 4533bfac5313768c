package testenv

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	alipayfake "orderflow/internal/payfake/alipay"
	stripefake "orderflow/internal/payfake/stripe"
	wechatfake "orderflow/internal/payfake/wechat"
	"orderflow/svc"
)

// FakeShop points a shop at a provider's fake: Configure sets the shop's
// settings for it, Started tells the fake where the started shop's API
// listens (the fake's notifications go there).
type FakeShop struct {
	Configure func(*svc.Config)
	Started   func(apiURL string)
}

// StartAlipayFake starts the Alipay fake behind its own gateway for the
// test. The shop reads the app's key from a file (the @path form) and
// Alipay's as PEM text.
func StartAlipayFake(t testing.TB) (*alipayfake.Fake, FakeShop) {
	t.Helper()
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
	return f, FakeShop{
		Configure: func(c *svc.Config) {
			c.AlipayAppID, c.AlipayPrivateKey, c.AlipayPublicKey = alipayfake.AppID, "@"+keyFile, f.AlipayPublicKey
			c.AlipayGatewayURL = gw.URL
			c.AlipayNotifyURL = "http://127.0.0.1:1/api/v1/payments/alipay/notify" // the fake is told the real one
		},
		Started: func(api string) { f.NotifyTo(api + "/api/v1/payments/alipay/notify") },
	}
}

// StartWechatFake starts the WeChat Pay fake for the test.
func StartWechatFake(t testing.TB) (*wechatfake.Fake, FakeShop) {
	t.Helper()
	f, err := wechatfake.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	k := f.Keys
	return f, FakeShop{
		Configure: func(c *svc.Config) {
			c.WechatMchID, c.WechatAppID, c.WechatCertSerial = k.MchID, k.AppID, k.CertSerial
			c.WechatPrivateKey, c.WechatAPIv3Key = k.PrivateKey, k.APIv3Key
			c.WechatPlatformPublicKey, c.WechatPlatformPublicKeyID = k.PlatformPublicKey, k.PlatformPublicKeyID
			c.WechatAPIURL = f.URL
			c.WechatNotifyURL = "http://127.0.0.1:1/api/v1/payments/wechat/notify" // the fake is told the real one
		},
		Started: func(api string) { f.NotifyTo(api + "/api/v1/payments/wechat/notify") },
	}
}

// StartStripeFake starts the Stripe fake for the test.
func StartStripeFake(t testing.TB) (*stripefake.Fake, FakeShop) {
	t.Helper()
	f := stripefake.New()
	t.Cleanup(f.Close)
	return f, FakeShop{
		Configure: func(c *svc.Config) {
			c.StripeSecretKey, c.StripeWebhookSecret, c.StripeAPIURL = f.SecretKey, f.WebhookSecret, f.URL
		},
		Started: func(api string) { f.SetWebhookURL(api + "/api/v1/payments/stripe/webhook") },
	}
}
