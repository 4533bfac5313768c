// Package stripe is the Stripe provider: a PaymentIntent per order whose
// client_secret the buyer's page confirms, webhooks verified by the SDK's
// webhook.ConstructEvent, refunds whose Idempotency-Key is the refund_no.
// Every wire detail is stripe-go's (github.com/stripe/stripe-go/v83); this
// package maps between it and pay.Provider. Amounts are the currency's minor
// units, which are orderflow's cents.
package stripe

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/tracing"

	sdk "github.com/stripe/stripe-go/v83"
)

// DefaultAPIURL is Stripe's API, stripe-go's own default.
const DefaultAPIURL = "https://api.stripe.com"

// Config is one Stripe account. Secrets are never printed.
type Config struct {
	SecretKey     string // ORDERFLOW_STRIPE_SECRET_KEY: sk_live_… / sk_test_… (or a restricted rk_… key)
	WebhookSecret string // ORDERFLOW_STRIPE_WEBHOOK_SECRET: whsec_…, the endpoint's signing secret
	APIURL        string // ORDERFLOW_STRIPE_API_URL: DefaultAPIURL when empty
	Currency      string // ORDERFLOW_CURRENCY, ISO 4217 lower case
	// Timeout bounds each call; a call past it is "outcome unknown" and the
	// caller queries before it sends again. 10s when zero.
	Timeout time.Duration
}

// Check validates cfg: the first problem, naming the setting, never its value.
func (cfg Config) Check() error {
	switch {
	case cfg.SecretKey == "":
		return errors.New("ORDERFLOW_STRIPE_SECRET_KEY is required for the stripe provider")
	case !strings.HasPrefix(cfg.SecretKey, "sk_") && !strings.HasPrefix(cfg.SecretKey, "rk_"):
		return errors.New("ORDERFLOW_STRIPE_SECRET_KEY must be a secret key (sk_…) or a restricted key (rk_…)")
	case !strings.HasPrefix(cfg.WebhookSecret, "whsec_"):
		return errors.New("ORDERFLOW_STRIPE_WEBHOOK_SECRET must be the webhook endpoint's signing secret (whsec_…)")
	case len(cfg.Currency) != 3 || strings.ToLower(cfg.Currency) != cfg.Currency:
		return errors.New("ORDERFLOW_CURRENCY must be a lower-case ISO 4217 code for the stripe provider")
	}
	if cfg.APIURL != "" {
		u, err := url.Parse(cfg.APIURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errors.New("ORDERFLOW_STRIPE_API_URL must be an absolute http(s) URL")
		}
	}
	return nil
}

// Provider is Stripe; safe for concurrent use.
type Provider struct {
	cfg    Config
	client *sdk.Client
}

// New builds the provider. The SDK's own network retries are off: a call
// whose outcome is unknown goes back to the caller, which queries before
// it sends again, so each refund send is one the refund state machine chose.
func New(cfg Config) (*Provider, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if cfg.APIURL == "" {
		cfg.APIURL = DefaultAPIURL
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	backends := sdk.NewBackendsWithConfig(&sdk.BackendConfig{
		URL:               sdk.String(strings.TrimSuffix(cfg.APIURL, "/")),
		HTTPClient:        &http.Client{Timeout: cfg.Timeout, Transport: tracing.Transport(nil)},
		MaxNetworkRetries: sdk.Int64(0),
		// The SDK's logger would print request errors on its own; ours
		// carry them with the order number instead.
		LeveledLogger:   &sdk.LeveledLogger{Level: sdk.LevelNull},
		EnableTelemetry: sdk.Bool(false),
	})
	return &Provider{cfg: cfg, client: sdk.NewClient(cfg.SecretKey, sdk.WithBackends(backends))}, nil
}

// Name is pay.NameStripe.
func (p *Provider) Name() string { return pay.NameStripe }

// Answer follows Stripe's convention: any 2xx acknowledges the event; a
// 4xx/5xx makes Stripe send it again with backoff.
func (p *Provider) Answer(w http.ResponseWriter, ok bool) {
	w.Header().Set("Content-Type", "application/json")
	if ok {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"received":true}`))
		return
	}
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write([]byte(`{"error":{"code":"not_recorded","message":"not recorded, send it again"}}`))
}

// notFound reports Stripe's answer for an object it does not have.
func notFound(err error) bool {
	var se *sdk.Error
	return errors.As(err, &se) && (se.HTTPStatusCode == http.StatusNotFound || se.Code == sdk.ErrorCodeResourceMissing)
}

// callErr keeps the operation and Stripe's type, code and message.
func callErr(op string, err error) error {
	var se *sdk.Error
	if errors.As(err, &se) {
		return fmt.Errorf("stripe %s: http %d %s %s: %s", op, se.HTTPStatusCode, se.Type, se.Code, se.Msg)
	}
	return fmt.Errorf("stripe %s: %w", op, err)
}
