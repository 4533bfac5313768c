// Package wechat is the WeChat Pay API v3 provider: Native pay (the buyer
// scans code_url), order and refund queries, refunds keyed by out_refund_no
// and verified, decrypted notifications, and the daily trade bill that
// reconciliation reads (statement.go, bill.go). Every signature, verification and
// AES-GCM step is the official SDK's (github.com/wechatpay-apiv3/wechatpay-go);
// this package only maps between it and pay.Provider. Amounts are fen, which
// are orderflow's cents (WeChat Pay takes CNY only).
package wechat

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/tracing"

	"github.com/wechatpay-apiv3/wechatpay-go/core"
	"github.com/wechatpay-apiv3/wechatpay-go/core/auth/verifiers"
	"github.com/wechatpay-apiv3/wechatpay-go/core/notify"
	"github.com/wechatpay-apiv3/wechatpay-go/core/option"
	"github.com/wechatpay-apiv3/wechatpay-go/services/payments/native"
	"github.com/wechatpay-apiv3/wechatpay-go/services/refunddomestic"
	"github.com/wechatpay-apiv3/wechatpay-go/utils"
)

// DefaultAPIURL is WeChat Pay's production API host, the SDK's own.
const DefaultAPIURL = "https://api.mch.weixin.qq.com"

// currency is the only one a mainland merchant account takes.
const currency = "CNY"

// Config is one merchant account. Keys are PEM text (the caller resolves
// the @file form); they are parsed once in New and never printed.
type Config struct {
	MchID      string // ORDERFLOW_WECHAT_MCH_ID
	AppID      string // ORDERFLOW_WECHAT_APP_ID
	CertSerial string // ORDERFLOW_WECHAT_CERT_SERIAL: the merchant API certificate's serial number
	PrivateKey string // ORDERFLOW_WECHAT_PRIVATE_KEY: the merchant API private key, PEM
	APIv3Key   string // ORDERFLOW_WECHAT_APIV3_KEY: 32 bytes, decrypts notification resources
	// PlatformPublicKey and PlatformPublicKeyID are WeChat Pay's public key
	// (the "微信支付公钥" mode), which verifies responses and notifications.
	PlatformPublicKey   string
	PlatformPublicKeyID string
	APIURL              string // ORDERFLOW_WECHAT_API_URL: scheme://host, DefaultAPIURL when empty
	NotifyURL           string // ORDERFLOW_WECHAT_NOTIFY_URL: public URL of /api/v1/payments/wechat/notify
	// Timeout bounds each call; a call past it is "outcome unknown" and
	// the caller queries before it sends again. 10s when zero.
	Timeout time.Duration
}

// Provider is WeChat Pay; safe for concurrent use.
type Provider struct {
	cfg     Config
	native  native.NativeApiService
	refunds refunddomestic.RefundsApiService
	notify  *notify.Handler
	// client signs requests and verifies answers (the trade bill query);
	// download signs requests but verifies nothing, since WeChat Pay does
	// not sign a bill file: its SHA1 in the signed query answer covers it.
	client   *core.Client
	download *core.Client
}

// Check validates cfg without building anything: the first problem, naming
// the setting and never its value.
func (cfg Config) Check() error {
	_, err := cfg.parse()
	return err
}

type parsedKeys struct {
	private  *rsa.PrivateKey
	platform *rsa.PublicKey
}

func (cfg Config) parse() (parsedKeys, error) {
	var k parsedKeys
	for _, s := range []struct{ name, v string }{
		{"ORDERFLOW_WECHAT_MCH_ID", cfg.MchID}, {"ORDERFLOW_WECHAT_APP_ID", cfg.AppID},
		{"ORDERFLOW_WECHAT_CERT_SERIAL", cfg.CertSerial}, {"ORDERFLOW_WECHAT_PLATFORM_PUBLIC_KEY_ID", cfg.PlatformPublicKeyID},
		{"ORDERFLOW_WECHAT_NOTIFY_URL", cfg.NotifyURL},
	} {
		if s.v == "" {
			return k, fmt.Errorf("%s is required for the wechat provider", s.name)
		}
	}
	if len(cfg.APIv3Key) != 32 {
		return k, errors.New("ORDERFLOW_WECHAT_APIV3_KEY must be 32 bytes")
	}
	var err error
	if k.private, err = privateKey(cfg.PrivateKey); err != nil {
		return k, errors.New("ORDERFLOW_WECHAT_PRIVATE_KEY is not an RSA private key in PEM")
	}
	if k.platform, err = utils.LoadPublicKey(cfg.PlatformPublicKey); err != nil {
		return k, errors.New("ORDERFLOW_WECHAT_PLATFORM_PUBLIC_KEY is not an RSA public key in PEM")
	}
	if cfg.APIURL != "" {
		if _, err := apiHost(cfg.APIURL); err != nil {
			return k, err
		}
	}
	if u, err := url.Parse(cfg.NotifyURL); err != nil || u.Host == "" {
		return k, errors.New("ORDERFLOW_WECHAT_NOTIFY_URL is not an absolute URL")
	}
	return k, nil
}

// privateKey reads the merchant key: apiclient_key.pem is PKCS#8 (the
// SDK's loader); a PKCS#1 "RSA PRIVATE KEY" (openssl's older default) is
// taken too.
func privateKey(s string) (*rsa.PrivateKey, error) {
	if k, err := utils.LoadPrivateKey(s); err == nil {
		return k, nil
	}
	b, _ := pem.Decode([]byte(strings.TrimSpace(s)))
	if b == nil {
		return nil, errors.New("no PEM block")
	}
	return x509.ParsePKCS1PrivateKey(b.Bytes)
}

// New builds the provider: the SDK client signs every request with the
// merchant key and verifies every response with WeChat Pay's public key.
func New(cfg Config) (*Provider, error) {
	keys, err := cfg.parse()
	if err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	httpClient := &http.Client{Timeout: cfg.Timeout, Transport: tracing.Transport(nil)}
	if cfg.APIURL != "" && cfg.APIURL != DefaultAPIURL {
		host, _ := apiHost(cfg.APIURL)
		httpClient.Transport = &hostRewrite{to: host, next: tracing.Transport(http.DefaultTransport)}
	}
	// A day's bill file may be large: its download has a longer bound.
	downloadHTTP := &http.Client{Timeout: billDownloadTimeout, Transport: httpClient.Transport}
	client, err := core.NewClient(context.Background(),
		option.WithWechatPayPublicKeyAuthCipher(cfg.MchID, cfg.CertSerial, keys.private,
			cfg.PlatformPublicKeyID, keys.platform),
		option.WithHTTPClient(httpClient),
	)
	if err != nil {
		return nil, fmt.Errorf("wechat: build client: %w", err)
	}
	download, err := core.NewClient(context.Background(),
		option.WithMerchantCredential(cfg.MchID, cfg.CertSerial, keys.private),
		option.WithoutValidator(),
		option.WithHTTPClient(downloadHTTP),
	)
	if err != nil {
		return nil, fmt.Errorf("wechat: build download client: %w", err)
	}
	h, err := notify.NewRSANotifyHandler(cfg.APIv3Key,
		verifiers.NewSHA256WithRSAPubkeyVerifier(cfg.PlatformPublicKeyID, *keys.platform))
	if err != nil {
		return nil, fmt.Errorf("wechat: build notify handler: %w", err)
	}
	return &Provider{
		cfg:      cfg,
		native:   native.NativeApiService{Client: client},
		refunds:  refunddomestic.RefundsApiService{Client: client},
		notify:   h,
		client:   client,
		download: download,
	}, nil
}

// Name is pay.NameWechat.
func (p *Provider) Name() string { return pay.NameWechat }

// Answer follows WeChat Pay's convention: 204 when recorded; otherwise an
// error object with a 5xx, which WeChat Pay retries on its schedule.
func (p *Provider) Answer(w http.ResponseWriter, ok bool) {
	if ok {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusInternalServerError)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": "FAIL", "message": "not recorded, send it again"})
}

// notFound reports the SDK error WeChat Pay answers for a payment or refund
// it never saw.
func notFound(err error) bool {
	var apiErr *core.APIError
	return errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound
}

// callErr keeps the operation and WeChat Pay's code and message but drops
// the SDK's dump of response headers.
func callErr(op string, err error) error {
	var apiErr *core.APIError
	if errors.As(err, &apiErr) {
		return fmt.Errorf("wechat %s: http %d %s: %s", op, apiErr.StatusCode, apiErr.Code, apiErr.Message)
	}
	return fmt.Errorf("wechat %s: %w", op, err)
}
