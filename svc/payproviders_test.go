package svc_test

import (
	"strings"
	"testing"

	"orderflow/internal/infra/pay"
	"orderflow/svc"
)

// wechatStripe enables both providers with well-formed settings.
func wechatStripe(t *testing.T) func(*svc.Config) {
	merchant, _ := testPEM(t)
	_, platform := testPEM(t)
	return func(c *svc.Config) {
		c.PayProviders = "paysim,wechat,stripe"
		c.WechatMchID, c.WechatAppID, c.WechatCertSerial = "1900000109", "wxd678efh567hg6787", "5157F09EFDC096DE15EBE81A47057A72"
		c.WechatPrivateKey, c.WechatPlatformPublicKey, c.WechatPlatformPublicKeyID = merchant, platform, "PUB_KEY_ID_0114"
		c.WechatAPIv3Key = strings.Repeat("k", 32)
		c.WechatNotifyURL = "https://shop.example/api/v1/payments/wechat/notify"
		c.StripeSecretKey, c.StripeWebhookSecret = "sk_test_abc", "whsec_abc"
	}
}

// TestValidateWechatStripe: the checks beyond presence — the APIv3 key's
// length, WeChat Pay's one currency, the kind of each Stripe secret, the
// optional base URLs — each stop start-up with one line naming the setting.
func TestValidateWechatStripe(t *testing.T) {
	both := wechatStripe(t)
	for _, tc := range []struct {
		name    string
		mutate  func(*svc.Config)
		wantErr string
	}{
		{"both well formed", both, ""},
		{"base URLs set", func(c *svc.Config) {
			both(c)
			c.WechatAPIURL, c.StripeAPIURL = "http://127.0.0.1:9001", "http://127.0.0.1:9002"
		}, ""},
		{"apiv3 key length", func(c *svc.Config) { both(c); c.WechatAPIv3Key = "short" }, "setting ORDERFLOW_WECHAT_APIV3_KEY: want the 32-byte APIv3 key"},
		{"wechat in usd", func(c *svc.Config) { both(c); c.Currency = "usd" }, "setting ORDERFLOW_CURRENCY: provider wechat takes cny only"},
		{"wechat url with a path", func(c *svc.Config) { both(c); c.WechatAPIURL = "http://127.0.0.1:9001/v3" }, "setting ORDERFLOW_WECHAT_API_URL: want scheme://host[:port] without a path"},
		{"publishable key", func(c *svc.Config) { both(c); c.StripeSecretKey = "pk_test_abc" }, "setting ORDERFLOW_STRIPE_SECRET_KEY: want a value starting with sk_ or rk_"},
		{"webhook secret", func(c *svc.Config) { both(c); c.StripeWebhookSecret = "abc" }, "setting ORDERFLOW_STRIPE_WEBHOOK_SECRET: want a value starting with whsec_"},
		{"stripe url", func(c *svc.Config) { both(c); c.StripeAPIURL = "api.stripe.com" }, "setting ORDERFLOW_STRIPE_API_URL: want an http(s) URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkValidate(t, tc.mutate, tc.wantErr, "sk_test", "kkkk")
		})
	}
}

// TestPayRegistryBuildsWechatAndStripe: with their settings, the registry
// holds both providers under their names.
func TestPayRegistryBuildsWechatAndStripe(t *testing.T) {
	c := validConfig()
	wechatStripe(t)(&c)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	r, err := svc.NewPayRegistry(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{pay.NamePaysim, pay.NameWechat, pay.NameStripe} {
		if p, ok := r.Get(n); !ok || p.Name() != n {
			t.Errorf("registry lacks %s", n)
		}
	}
}
