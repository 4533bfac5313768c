package svc_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"orderflow/svc"
)

// testPEM is a freshly generated RSA key pair as PEM text.
func testPEM(t *testing.T) (private, public string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
}

// TestValidatePay: each bad provider setting stops start-up with one line
// naming it, and never quotes a key.
func TestValidatePay(t *testing.T) {
	priv, pub := testPEM(t)
	keyFile := filepath.Join(t.TempDir(), "app.pem")
	if err := os.WriteFile(keyFile, []byte(priv), 0o600); err != nil {
		t.Fatal(err)
	}
	alipay := func(c *svc.Config) {
		c.PayProviders = "paysim, alipay"
		c.AlipayAppID, c.AlipayPrivateKey, c.AlipayPublicKey = "2021000000000001", "@"+keyFile, pub
		c.AlipayNotifyURL = "https://shop.example/api/v1/payments/alipay/notify"
	}
	for _, tc := range []struct {
		name    string
		mutate  func(*svc.Config)
		wantErr string
	}{
		{"the simulator by default", func(*svc.Config) {}, ""},
		{"alipay, key from a file", alipay, ""},
		{"no provider", func(c *svc.Config) { c.PayProviders = " , " }, "setting ORDERFLOW_PAY_PROVIDERS: no provider enabled"},
		{"unknown provider", func(c *svc.Config) { c.PayProviders = "paysim,paypal" }, "setting ORDERFLOW_PAY_PROVIDERS: unknown provider paypal"},
		{"twice", func(c *svc.Config) { c.PayProviders = "paysim,paysim" }, "setting ORDERFLOW_PAY_PROVIDERS: provider paysim listed twice"},
		{"currency", func(c *svc.Config) { c.Currency = "CNY" }, "setting ORDERFLOW_CURRENCY: want an ISO 4217 code in lower case"},
		{"alipay without app id", func(c *svc.Config) { alipay(c); c.AlipayAppID = "" }, "setting ORDERFLOW_ALIPAY_APP_ID: missing (needed by provider alipay)"},
		{"alipay key not PEM", func(c *svc.Config) { alipay(c); c.AlipayPublicKey = "secret-ish-garbage" }, "setting ORDERFLOW_ALIPAY_PUBLIC_KEY: not a PEM key"},
		{"alipay key file missing", func(c *svc.Config) { alipay(c); c.AlipayPrivateKey = "@/nonexistent/app.pem" }, "setting ORDERFLOW_ALIPAY_PRIVATE_KEY: read key file"},
		{"alipay notify url", func(c *svc.Config) { alipay(c); c.AlipayNotifyURL = "shop.example/notify" }, "setting ORDERFLOW_ALIPAY_NOTIFY_URL: want an http(s) URL"},
		{"wechat needs its settings", func(c *svc.Config) { c.PayProviders = "wechat" }, "setting ORDERFLOW_WECHAT_MCH_ID: missing (needed by provider wechat)"},
		{"stripe needs its settings", func(c *svc.Config) { c.PayProviders = "stripe" }, "setting ORDERFLOW_STRIPE_SECRET_KEY: missing (needed by provider stripe)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkValidate(t, tc.mutate, tc.wantErr, "PRIVATE KEY", "garbage")
		})
	}
}

// checkValidate validates validConfig() changed by mutate: the error starts
// with wantErr ("" for none), is one line and quotes none of the secrets.
func checkValidate(t *testing.T, mutate func(*svc.Config), wantErr string, secrets ...string) {
	t.Helper()
	c := validConfig()
	mutate(&c)
	err := c.Validate()
	switch {
	case wantErr == "" && err != nil:
		t.Fatalf("Validate: %v", err)
	case wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), wantErr)):
		t.Fatalf("Validate = %v, want %q…", err, wantErr)
	case err != nil && strings.Contains(err.Error(), "\n"):
		t.Fatalf("more than one line: %q", err)
	}
	for _, secret := range secrets {
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Fatalf("the error quotes a secret (%q): %v", secret, err)
		}
	}
}
