// Package svc holds what both binaries share: the validated configuration and
// the ServiceContext with one constructor file per dependency.
package svc

import (
	"strings"
	"time"
)

// Config is every setting, read from etc/*.yaml and overridden by
// ORDERFLOW_<KEY> environment variables (KEY = the yaml key upper-cased).
type Config struct {
	MySQLDSN      string `yaml:"mysql_dsn"`
	SQLitePath    string `yaml:"sqlite_path"` // the dev mode's embedded ledger, instead of mysql_dsn
	DBMaxOpen     int    `yaml:"db_max_open"`
	RedisMode     string `yaml:"redis_mode"` // standalone, sentinel or cluster
	RedisAddr     string `yaml:"redis_addr"` // comma-separated for sentinel/cluster
	RedisDB       int    `yaml:"redis_db"`
	RedisPassword string `yaml:"redis_password"`
	RedisMaster   string `yaml:"redis_master"` // sentinel master name
	HTTPAddr      string `yaml:"http_addr"`
	// Every listener's limits (HTTPServer): no client can hold a connection open.
	HTTPReadHeaderTimeout Duration `yaml:"http_read_header_timeout"`
	HTTPReadTimeout       Duration `yaml:"http_read_timeout"`
	HTTPWriteTimeout      Duration `yaml:"http_write_timeout"`
	HTTPIdleTimeout       Duration `yaml:"http_idle_timeout"`
	HTTPMaxHeaderBytes    int      `yaml:"http_max_header_bytes"`
	AdminToken            string   `yaml:"admin_token"` // an admin named "admin"
	// AdminTokens names the operators: "name:role:token,..." (operators.go).
	AdminTokens string `yaml:"admin_tokens"`
	PaySecret   string `yaml:"pay_secret"`
	PayURL      string `yaml:"pay_url"`
	NotifyURL   string `yaml:"notify_url"`
	// Shop webhooks (docs/webhooks.md): off while webhook_url is unset.
	WebhookURL        string   `yaml:"webhook_url"`
	WebhookSecret     string   `yaml:"webhook_secret"`
	WebhookRetryDelay Duration `yaml:"webhook_retry_delay"` // first retry; doubled each time, capped at one hour
	LogLevel          string   `yaml:"log_level"`
	LogFormat         string   `yaml:"log_format"` // json or console
	// MetricsAuth is who may read /metrics: none (anyone, the default) or
	// admin (the admin token as a Bearer header), for shops that expose the
	// API's port.
	MetricsAuth string `yaml:"metrics_auth"`
	// MetricsAddr, when set, moves the API's /metrics to a listener of its
	// own (the worker's stays on its ORDERFLOW_HTTP_ADDR).
	MetricsAddr string `yaml:"metrics_addr"`
	// PrometheusURL is the Prometheus that scrapes the fleet, for the
	// embedded asynqmon's metrics view (optional).
	PrometheusURL string `yaml:"prometheus_url"`

	OrderTTL     Duration `yaml:"order_ttl"`
	ClaimTimeout Duration `yaml:"claim_timeout"`
	// WorkerLease is how long a worker may go without a beat before the
	// others take its claims and tasks over (fleet package).
	WorkerLease       Duration `yaml:"worker_lease"`
	SweepInterval     Duration `yaml:"sweep_interval"`
	SweepPageSize     int      `yaml:"sweep_page_size"`
	ReconcileSchedule string   `yaml:"reconcile_schedule"`
	ReconcileGrace    Duration `yaml:"reconcile_grace"`
	// StatementSchedule runs yesterday's statement of every provider (cron,
	// UTC unless it names its own CRON_TZ); StatementLookback re-checks the
	// days before it; StatementRetryDelay is a failing run's first retry.
	StatementSchedule   string   `yaml:"statement_schedule"`
	StatementLookback   int      `yaml:"statement_lookback"`
	StatementRetryDelay Duration `yaml:"statement_retry_delay"`
	NotifyInterval      Duration `yaml:"notify_interval"`
	MaxPending          int      `yaml:"max_pending"`
	MaxAttempts         int      `yaml:"max_attempts"`
	// ActivateTimeout 0 (the default) is derived from ClaimTimeout: see
	// ActivateDeadline.
	ActivateTimeout    Duration `yaml:"activate_timeout"`
	ActivateRetryDelay Duration `yaml:"activate_retry_delay"`
	CacheTTL           Duration `yaml:"cache_ttl"`
	IdempotencyTTL     Duration `yaml:"idempotency_ttl"`
	RelayInterval      Duration `yaml:"relay_interval"`
	RefundRetryDelays  string   `yaml:"refund_retry_delays"` // comma-separated durations
	SettleRetryDelays  string   `yaml:"settle_retry_delays"` // comma-separated durations
	RefundMaxAttempts  int      `yaml:"refund_max_attempts"`
	RefundAlertAfter   Duration `yaml:"refund_alert_after"`
	PayTimeout         Duration `yaml:"pay_timeout"`

	// Payment providers (pay.go): which are enabled, the currency, and each
	// one's settings. Keys are PEM text or "@<file path>".
	PayProviders              string   `yaml:"pay_providers"` // comma list; default paysim
	Currency                  string   `yaml:"currency"`      // ISO 4217, lower case
	PayQueryAfter             Duration `yaml:"pay_query_after"`
	AlipayAppID               string   `yaml:"alipay_app_id"`
	AlipayPrivateKey          string   `yaml:"alipay_private_key"` // the app's
	AlipayPublicKey           string   `yaml:"alipay_public_key"`  // Alipay's
	AlipayGatewayURL          string   `yaml:"alipay_gateway_url"`
	AlipayNotifyURL           string   `yaml:"alipay_notify_url"`
	WechatMchID               string   `yaml:"wechat_mch_id"`
	WechatAppID               string   `yaml:"wechat_app_id"`
	WechatCertSerial          string   `yaml:"wechat_cert_serial"`
	WechatPrivateKey          string   `yaml:"wechat_private_key"`
	WechatAPIv3Key            string   `yaml:"wechat_apiv3_key"`
	WechatPlatformPublicKey   string   `yaml:"wechat_platform_public_key"`
	WechatPlatformPublicKeyID string   `yaml:"wechat_platform_public_key_id"`
	WechatAPIURL              string   `yaml:"wechat_api_url"`
	WechatNotifyURL           string   `yaml:"wechat_notify_url"`
	StripeSecretKey           string   `yaml:"stripe_secret_key"`
	StripeWebhookSecret       string   `yaml:"stripe_webhook_secret"`
	StripeAPIURL              string   `yaml:"stripe_api_url"`

	Concurrency int `yaml:"concurrency"`
	// ActivateBatch is the most activate tasks a worker runs as one batch.
	ActivateBatch            int      `yaml:"activate_batch"`
	TaskCheckInterval        Duration `yaml:"task_check_interval"`
	DelayedTaskCheckInterval Duration `yaml:"delayed_task_check_interval"`
	ShutdownTimeout          Duration `yaml:"shutdown_timeout"`
}

// Duration is a time.Duration written as a Go duration string ("15m").
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Defaults returns the configuration every key falls back to.
func Defaults() Config {
	return Config{
		DBMaxOpen:                32,
		RedisMode:                "standalone",
		RedisAddr:                "127.0.0.1:6379",
		HTTPAddr:                 "127.0.0.1:8080",
		HTTPReadHeaderTimeout:    Duration(5 * time.Second),
		HTTPReadTimeout:          Duration(30 * time.Second),
		HTTPWriteTimeout:         Duration(60 * time.Second),
		HTTPIdleTimeout:          Duration(60 * time.Second),
		HTTPMaxHeaderBytes:       64 << 10,
		PayURL:                   "http://127.0.0.1:8090",
		LogLevel:                 "info",
		LogFormat:                "json",
		MetricsAuth:              "none",
		OrderTTL:                 Duration(15 * time.Minute),
		ClaimTimeout:             Duration(10 * time.Minute),
		WorkerLease:              Duration(15 * time.Second),
		SweepInterval:            Duration(time.Minute),
		SweepPageSize:            500,
		ReconcileSchedule:        "0 3 * * *",
		ReconcileGrace:           Duration(15 * time.Minute),
		StatementSchedule:        "0 11 * * *",
		StatementLookback:        3,
		StatementRetryDelay:      Duration(time.Minute),
		NotifyInterval:           Duration(time.Minute),
		MaxPending:               5,
		MaxAttempts:              10,
		ActivateRetryDelay:       Duration(time.Second),
		CacheTTL:                 Duration(time.Minute),
		IdempotencyTTL:           Duration(24 * time.Hour),
		RelayInterval:            Duration(time.Second),
		WebhookRetryDelay:        Duration(5 * time.Second),
		RefundRetryDelays:        "1m,5m,30m,30m",
		SettleRetryDelays:        "1s,2s,4s,8s,16s",
		RefundMaxAttempts:        5,
		RefundAlertAfter:         Duration(24 * time.Hour),
		PayTimeout:               Duration(5 * time.Second),
		PayProviders:             "paysim",
		Currency:                 "cny",
		PayQueryAfter:            Duration(time.Minute),
		AlipayGatewayURL:         "https://openapi.alipay.com/gateway.do",
		Concurrency:              20,
		ActivateBatch:            16,
		TaskCheckInterval:        Duration(20 * time.Millisecond),
		DelayedTaskCheckInterval: Duration(200 * time.Millisecond),
		ShutdownTimeout:          Duration(20 * time.Second),
	}
}

// maxDerivedActivate caps the activation timeout derived from the claim timeout.
const maxDerivedActivate = 2 * time.Minute

// ActivateDeadline is how long one activation may run: activate_timeout when
// it is set, otherwise half the claim timeout, at most two minutes — always
// shorter than the claim timeout, so setting only the claim timeout (a SPEC
// knob) never makes a default conflict with it.
func (c Config) ActivateDeadline() time.Duration {
	if c.ActivateTimeout > 0 {
		return c.ActivateTimeout.D()
	}
	return min(c.ClaimTimeout.D()/2, maxDerivedActivate)
}

// RefundDelays parses refund_retry_delays ("1m,5m,30m,30m"); Validate has checked it.
func (c Config) RefundDelays() []time.Duration {
	d, _ := parseDelays(c.RefundRetryDelays)
	return d
}

// SettleDelays parses settle_retry_delays ("1s,2s,4s,8s,16s"); Validate has checked it.
func (c Config) SettleDelays() []time.Duration {
	d, _ := parseDelays(c.SettleRetryDelays)
	return d
}

// StatementCron is the statement schedule as the schedulers read it: a
// cron spec is UTC (SPEC) unless it names its own zone or is an interval.
func (c Config) StatementCron() string {
	s := strings.TrimSpace(c.StatementSchedule)
	if strings.HasPrefix(s, "@") || strings.HasPrefix(s, "CRON_TZ=") || strings.HasPrefix(s, "TZ=") {
		return s
	}
	return "CRON_TZ=UTC " + s
}
