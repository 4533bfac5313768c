package svc

import (
	"encoding/pem"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"

	"orderflow/internal/infra/pay"
)

// Providers lists ORDERFLOW_PAY_PROVIDERS, trimmed, in order.
func (c Config) Providers() []string {
	var out []string
	for _, n := range strings.Split(c.PayProviders, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// Key resolves a key setting: PEM text as it is, or "@<file path>" read
// from that file. The error never quotes the key.
func Key(v string) (string, error) {
	if path, ok := strings.CutPrefix(v, "@"); ok {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("read key file: %w", err)
		}
		return string(b), nil
	}
	return v, nil
}

// pemKey is a key setting that must resolve to a PEM block.
func pemKey(v string) error {
	k, err := Key(v)
	if err != nil {
		return err
	}
	if b, _ := pem.Decode([]byte(strings.TrimSpace(k))); b == nil {
		return fmt.Errorf("not a PEM key (want -----BEGIN …----- text, or @<file path>)")
	}
	return nil
}

var currencyRE = regexp.MustCompile(`^[a-z]{3}$`)

// validatePay checks the enabled providers and each one's settings; the
// error names the first bad setting and never quotes a secret.
func (c Config) validatePay() error {
	bad := func(key, why string) error {
		return fmt.Errorf("setting %s%s: %s", EnvPrefix, strings.ToUpper(key), why)
	}
	names := c.Providers()
	if len(names) == 0 {
		return bad("pay_providers", "no provider enabled (want a comma list of paysim, alipay, wechat, stripe)")
	}
	if !currencyRE.MatchString(c.Currency) {
		return bad("currency", "want an ISO 4217 code in lower case, like cny or usd")
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return bad("pay_providers", "provider "+n+" listed twice")
		}
		seen[n] = true
		var req, opt []setting // opt: checked only when set (the provider has a default)
		switch n {
		case pay.NamePaysim:
		case pay.NameAlipay:
			if c.Currency != "cny" {
				return bad("currency", "alipay takes cny only (the open platform's trades are in yuan)")
			}
			req = []setting{{"alipay_app_id", c.AlipayAppID, nil}, {"alipay_private_key", c.AlipayPrivateKey, pemKey},
				{"alipay_public_key", c.AlipayPublicKey, pemKey}, {"alipay_gateway_url", c.AlipayGatewayURL, httpURL},
				{"alipay_notify_url", c.AlipayNotifyURL, httpURL}}
		case pay.NameWechat:
			req = []setting{{"wechat_mch_id", c.WechatMchID, nil}, {"wechat_app_id", c.WechatAppID, nil},
				{"wechat_cert_serial", c.WechatCertSerial, nil}, {"wechat_private_key", c.WechatPrivateKey, pemKey},
				{"wechat_apiv3_key", c.WechatAPIv3Key, apiv3Key}, {"wechat_platform_public_key", c.WechatPlatformPublicKey, pemKey},
				{"wechat_platform_public_key_id", c.WechatPlatformPublicKeyID, nil}, {"wechat_notify_url", c.WechatNotifyURL, httpURL},
				{"currency", c.Currency, cnyOnly}}
			opt = []setting{{"wechat_api_url", c.WechatAPIURL, hostOnlyURL}}
		case pay.NameStripe:
			req = []setting{{"stripe_secret_key", c.StripeSecretKey, prefixed("sk_", "rk_")},
				{"stripe_webhook_secret", c.StripeWebhookSecret, prefixed("whsec_")}}
			opt = []setting{{"stripe_api_url", c.StripeAPIURL, httpURL}}
		default:
			return bad("pay_providers", "unknown provider "+n+" (want paysim, alipay, wechat or stripe)")
		}
		for _, s := range req {
			if strings.TrimSpace(s.value) == "" {
				return bad(s.key, "missing (needed by provider "+n+")")
			}
			if s.check != nil {
				if err := s.check(s.value); err != nil {
					return bad(s.key, err.Error())
				}
			}
		}
		for _, s := range opt {
			if s.value != "" {
				if err := s.check(s.value); err != nil {
					return bad(s.key, err.Error())
				}
			}
		}
	}
	return nil
}

// setting is one provider setting to check: present, and well formed.
type setting struct {
	key, value string
	check      func(string) error
}

func httpURL(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("want an http(s) URL")
	}
	return nil
}

// apiv3Key: WeChat Pay's APIv3 key is the AES-256 key itself.
func apiv3Key(v string) error {
	if len(v) != 32 {
		return fmt.Errorf("want the 32-byte APIv3 key")
	}
	return nil
}

// cnyOnly: a mainland WeChat Pay merchant account takes CNY only.
func cnyOnly(v string) error {
	if v != "cny" {
		return fmt.Errorf("provider wechat takes cny only")
	}
	return nil
}

// hostOnlyURL: the SDK signs the path, so the base URL may not add one.
func hostOnlyURL(v string) error {
	if err := httpURL(v); err != nil {
		return err
	}
	if u, _ := url.Parse(v); u.Path != "" && u.Path != "/" {
		return fmt.Errorf("want scheme://host[:port] without a path")
	}
	return nil
}

// prefixed checks the kind of a Stripe key or secret by its prefix.
func prefixed(prefixes ...string) func(string) error {
	return func(v string) error {
		for _, p := range prefixes {
			if strings.HasPrefix(v, p) {
				return nil
			}
		}
		return fmt.Errorf("want a value starting with %s", strings.Join(prefixes, " or "))
	}
}
