package svc

import (
	"fmt"
	"strings"

	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/pay/alipay"
	paysimpay "orderflow/internal/infra/pay/paysim"
	stripepay "orderflow/internal/infra/pay/stripe"
	wechatpay "orderflow/internal/infra/pay/wechat"
)

// NewPayRegistry builds the enabled providers (Validate has checked their
// settings). A provider that still cannot be built stops start-up with one
// line naming it.
func NewPayRegistry(c Config) (*pay.Registry, error) {
	var ps []pay.Provider
	for _, n := range c.Providers() {
		p, err := newProvider(c, n)
		if err != nil {
			return nil, fmt.Errorf("setting %sPAY_PROVIDERS: provider %s: %w", EnvPrefix, n, err)
		}
		ps = append(ps, p)
	}
	return pay.NewRegistry(ps...)
}

func newProvider(c Config, name string) (pay.Provider, error) {
	switch name {
	case pay.NamePaysim:
		return paysimpay.New(c.PayURL, c.PaySecret, c.PayTimeout.D()), nil
	case pay.NameAlipay:
		priv, err := Key(c.AlipayPrivateKey)
		if err != nil {
			return nil, err
		}
		pub, err := Key(c.AlipayPublicKey)
		if err != nil {
			return nil, err
		}
		return alipay.New(alipay.Config{AppID: c.AlipayAppID, PrivateKey: priv, PublicKey: pub,
			GatewayURL: c.AlipayGatewayURL, NotifyURL: c.AlipayNotifyURL, Timeout: c.PayTimeout.D()})
	case pay.NameWechat:
		wc, err := c.wechatConfig()
		if err != nil {
			return nil, err
		}
		return wechatpay.New(wc)
	case pay.NameStripe:
		return stripepay.New(c.stripeConfig())
	}
	return nil, fmt.Errorf("not available in this build (have %s)", strings.Join([]string{pay.NamePaysim, pay.NameAlipay, pay.NameWechat, pay.NameStripe}, ", "))
}

// wechatConfig is the WeChat Pay provider's configuration, keys resolved
// from PEM text or @file.
func (c Config) wechatConfig() (wechatpay.Config, error) {
	priv, err := Key(c.WechatPrivateKey)
	if err != nil {
		return wechatpay.Config{}, fmt.Errorf("%sWECHAT_PRIVATE_KEY: %w", EnvPrefix, err)
	}
	pub, err := Key(c.WechatPlatformPublicKey)
	if err != nil {
		return wechatpay.Config{}, fmt.Errorf("%sWECHAT_PLATFORM_PUBLIC_KEY: %w", EnvPrefix, err)
	}
	return wechatpay.Config{
		MchID: c.WechatMchID, AppID: c.WechatAppID, CertSerial: c.WechatCertSerial, PrivateKey: priv,
		APIv3Key: c.WechatAPIv3Key, PlatformPublicKey: pub, PlatformPublicKeyID: c.WechatPlatformPublicKeyID,
		APIURL: c.WechatAPIURL, NotifyURL: c.WechatNotifyURL, Timeout: c.PayTimeout.D(),
	}, nil
}

// stripeConfig is the Stripe provider's configuration.
func (c Config) stripeConfig() stripepay.Config {
	return stripepay.Config{
		SecretKey: c.StripeSecretKey, WebhookSecret: c.StripeWebhookSecret, APIURL: c.StripeAPIURL,
		Currency: c.Currency, Timeout: c.PayTimeout.D(),
	}
}
