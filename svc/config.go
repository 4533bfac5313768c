// Package svc holds what both binaries share: the validated configuration and
// the ServiceContext with one constructor file per dependency.
package svc

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"orderflow/internal/infra/schedule"

	"gopkg.in/yaml.v3"
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

// EnvPrefix starts every configuration variable.
const EnvPrefix = "ORDERFLOW_"

// notConfigVars are ORDERFLOW_* variables read elsewhere, not unknown.
var notConfigVars = map[string]bool{
	"ORDERFLOW_CONFIG": true, "ORDERFLOW_FAILPOINTS": true, "ORDERFLOW_API_URL": true,
	"ORDERFLOW_API_ADDR": true, "ORDERFLOW_QUEUE_ADDR": true, // scripts/run.sh's listeners
}

// Load reads the YAML file (if path is not empty and exists), applies
// environment overrides from environ ("KEY=value" pairs) and validates.
// Warnings (unknown variables) are returned for the caller to log.
func Load(path string, environ []string) (Config, []string, error) {
	cfg := Defaults()
	var yamlWarnings []string
	if path != "" {
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			if yamlWarnings, err = applyYAML(&cfg, path, b); err != nil {
				return cfg, yamlWarnings, err
			}
		case !errors.Is(err, os.ErrNotExist):
			return cfg, nil, fmt.Errorf("config %s: %w", path, err)
		}
	}
	warnings, err := applyEnv(&cfg, environ)
	warnings = append(yamlWarnings, warnings...)
	if err != nil {
		return cfg, warnings, err
	}
	return cfg, warnings, cfg.Validate()
}

// fieldsByEnvName maps ORDERFLOW_<KEY> to the Config field index.
func fieldsByEnvName(v reflect.Value) map[string]int {
	fields := map[string]int{}
	for i := 0; i < v.NumField(); i++ {
		fields[EnvPrefix+strings.ToUpper(v.Type().Field(i).Tag.Get("yaml"))] = i
	}
	return fields
}

// applyYAML reads a flat YAML file through the same parser as the
// environment, so a bad value names its ORDERFLOW_<KEY> either way.
func applyYAML(cfg *Config, path string, b []byte) ([]string, error) {
	var doc map[string]yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	v := reflect.ValueOf(cfg).Elem()
	fields := fieldsByEnvName(v)
	var warnings []string
	for key, node := range doc {
		name := EnvPrefix + strings.ToUpper(key)
		if why, ok := retiredSettings[name]; ok {
			warnings = append(warnings, fmt.Sprintf("setting %s (%s in %s) is retired and ignored: %s", name, key, path, why))
			continue
		}
		i, ok := fields[name]
		if !ok {
			return warnings, fmt.Errorf("config %s: unknown key %q", path, key)
		}
		if err := setField(v.Field(i), node.Value); err != nil {
			return warnings, fmt.Errorf("setting %s (%s: %s in %s): %w", name, key, node.Value, path, err)
		}
	}
	return warnings, nil
}

// retiredSettings were settings once (the first SPEC names
// ORDERFLOW_RECOVERY_INTERVAL); a deployment that still sets one starts, with
// a warning naming what does the job now.
var retiredSettings = map[string]string{
	"ORDERFLOW_RECOVERY_INTERVAL": "the continuous sweep resets stuck claims and re-queues lost tasks every ORDERFLOW_SWEEP_INTERVAL",
}

func applyEnv(cfg *Config, environ []string) ([]string, error) {
	v := reflect.ValueOf(cfg).Elem()
	fields := fieldsByEnvName(v)
	var warnings []string
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) || notConfigVars[name] ||
			strings.HasPrefix(name, "ORDERFLOW_PAYSIM_") || strings.HasPrefix(name, "ORDERFLOW_TEST_") ||
			strings.HasPrefix(name, "ORDERFLOW_DEV_") {
			continue
		}
		if why, ok := retiredSettings[name]; ok {
			warnings = append(warnings, "setting "+name+" is retired and ignored: "+why)
			continue
		}
		i, ok := fields[name]
		if !ok {
			warnings = append(warnings, "unknown setting "+name+" ignored")
			continue
		}
		if err := setField(v.Field(i), val); err != nil {
			return warnings, fmt.Errorf("setting %s=%q: %w", name, val, err)
		}
	}
	return warnings, nil
}

func setField(f reflect.Value, val string) error {
	switch f.Interface().(type) {
	case Duration:
		d, err := time.ParseDuration(val)
		if err != nil {
			return err
		}
		f.Set(reflect.ValueOf(Duration(d)))
	case int:
		n, err := strconv.Atoi(val)
		if err != nil {
			return fmt.Errorf("not an integer")
		}
		f.SetInt(int64(n))
	case string:
		f.SetString(val)
	default:
		return fmt.Errorf("unsupported type %s", f.Type())
	}
	return nil
}

// CronParser accepts standard 5-field specs and descriptors such as "@daily"
// (schedule.Parse reads "@every" itself, aligned to the epoch).
var CronParser = schedule.Parser

// Validate checks every setting; the error names the first bad one.
func (c Config) Validate() error {
	bad := func(key, why string) error {
		return fmt.Errorf("setting %s%s: %s", EnvPrefix, strings.ToUpper(key), why)
	}
	switch {
	case c.MySQLDSN == "" && c.SQLitePath == "":
		return bad("mysql_dsn", "missing")
	case c.MySQLDSN != "" && c.SQLitePath != "":
		return bad("sqlite_path", "set either it (the embedded dev ledger) or mysql_dsn, not both")
	case c.RedisAddr == "":
		return bad("redis_addr", "missing")
	case c.RedisMode != "standalone" && c.RedisMode != "sentinel" && c.RedisMode != "cluster":
		return bad("redis_mode", "want standalone, sentinel or cluster")
	case c.RedisMode == "sentinel" && c.RedisMaster == "":
		return bad("redis_master", "missing (needed for sentinel)")
	case c.RedisDB < 0 || c.RedisDB > 15:
		return bad("redis_db", "want 0..15")
	case c.HTTPAddr == "":
		return bad("http_addr", "missing")
	case c.AdminToken == "" && c.AdminTokens == "":
		return bad("admin_token", "missing (or name operators in admin_tokens)")
	case c.AdminToken != "" && len(c.AdminToken) < 16:
		return bad("admin_token", "shorter than 16 characters")
	case c.PaySecret == "":
		return bad("pay_secret", "missing")
	case c.LogFormat != "json" && c.LogFormat != "console":
		return bad("log_format", "want json or console")
	case c.MetricsAuth != "none" && c.MetricsAuth != "admin":
		return bad("metrics_auth", "want none or admin")
	case c.MetricsAddr != "" && !isHostPort(c.MetricsAddr):
		return bad("metrics_addr", "want host:port")
	case c.MetricsAddr != "" && c.MetricsAddr == c.HTTPAddr:
		return bad("metrics_addr", "must differ from http_addr (leave it unset to serve /metrics there)")
	case c.PrometheusURL != "" && !isHTTPURL(c.PrometheusURL):
		return bad("prometheus_url", "want an http(s) URL such as http://prometheus:9090")
	case c.MaxPending < 1:
		return bad("max_pending", "must be at least 1")
	case c.MaxAttempts < 1:
		return bad("max_attempts", "must be at least 1")
	case c.Concurrency < 1:
		return bad("concurrency", "must be at least 1")
	case c.ActivateBatch < 1 || c.ActivateBatch > 256:
		return bad("activate_batch", "want 1..256 (1 runs each order alone)")
	case c.DBMaxOpen < 1:
		return bad("db_max_open", "must be at least 1")
	case c.RefundMaxAttempts < 1:
		return bad("refund_max_attempts", "must be at least 1")
	case c.HTTPMaxHeaderBytes < 1<<10 || c.HTTPMaxHeaderBytes > 1<<20:
		return bad("http_max_header_bytes", "want 1024..1048576")
	case c.ActivateTimeout < 0:
		return bad("activate_timeout", "must be a positive duration, or unset to derive it from claim_timeout")
	case c.SweepPageSize < 1 || c.SweepPageSize > 10000:
		return bad("sweep_page_size", "want 1..10000")
	case c.WebhookURL != "" && !validWebhookURL(c.WebhookURL):
		return bad("webhook_url", "want an absolute http:// or https:// URL")
	case c.WebhookURL != "" && c.WebhookSecret == "":
		return bad("webhook_secret", "missing (needed when webhook_url is set: every delivery is signed)")
	}
	if _, err := parseDelays(c.RefundRetryDelays); err != nil {
		return bad("refund_retry_delays", err.Error())
	}
	if _, err := parseDelays(c.SettleRetryDelays); err != nil {
		return bad("settle_retry_delays", err.Error())
	}
	for key, d := range map[string]Duration{
		"order_ttl": c.OrderTTL, "claim_timeout": c.ClaimTimeout, "sweep_interval": c.SweepInterval, "worker_lease": c.WorkerLease,
		"reconcile_grace": c.ReconcileGrace, "notify_interval": c.NotifyInterval, "statement_retry_delay": c.StatementRetryDelay,
		"activate_retry_delay": c.ActivateRetryDelay, "webhook_retry_delay": c.WebhookRetryDelay,
		"cache_ttl": c.CacheTTL, "idempotency_ttl": c.IdempotencyTTL, "relay_interval": c.RelayInterval,
		"task_check_interval": c.TaskCheckInterval, "delayed_task_check_interval": c.DelayedTaskCheckInterval,
		"shutdown_timeout": c.ShutdownTimeout, "refund_alert_after": c.RefundAlertAfter, "pay_timeout": c.PayTimeout,
		"pay_query_after":          c.PayQueryAfter,
		"http_read_header_timeout": c.HTTPReadHeaderTimeout, "http_read_timeout": c.HTTPReadTimeout,
		"http_write_timeout": c.HTTPWriteTimeout, "http_idle_timeout": c.HTTPIdleTimeout,
	} {
		if d <= 0 {
			return bad(key, "must be a positive duration")
		}
	}
	if _, err := c.operatorSet(); err != nil {
		return bad("admin_tokens", err.Error())
	}
	if err := c.validatePay(); err != nil {
		return err
	}
	if c.HTTPReadHeaderTimeout > c.HTTPReadTimeout {
		return bad("http_read_header_timeout", "must not be longer than http_read_timeout")
	}
	if c.WorkerLease < Duration(time.Second) {
		return bad("worker_lease", "want at least 1s (a worker beats ten times a lease)")
	}
	if c.ActivateTimeout != 0 && c.ActivateTimeout >= c.ClaimTimeout {
		return bad("activate_timeout", "must be shorter than claim_timeout, or a running activation could be recovered under it")
	}
	if _, err := schedule.Parse(c.ReconcileSchedule); err != nil {
		return bad("reconcile_schedule", err.Error())
	}
	if _, err := schedule.Parse(c.StatementCron()); err != nil {
		return bad("statement_schedule", err.Error())
	}
	if c.StatementLookback < 0 || c.StatementLookback > 30 {
		return bad("statement_lookback", "want 0..30 days")
	}
	return nil
}

// validWebhookURL: the receiver must be an absolute http(s) URL with a host.
func validWebhookURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
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

func parseDelays(list string) ([]time.Duration, error) {
	var out []time.Duration
	for _, part := range strings.Split(list, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("want comma-separated positive durations, got %q", list)
		}
		out = append(out, d)
	}
	return out, nil
}

func isHostPort(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	return err == nil && port != ""
}

func isHTTPURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
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
