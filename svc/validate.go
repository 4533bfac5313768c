package svc

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"orderflow/internal/infra/schedule"
)

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
	case c.WebhookURL != "" && !isHTTPURL(c.WebhookURL):
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

// isHostPort: a listener address with a port (the host may be empty).
func isHostPort(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	return err == nil && port != ""
}

// isHTTPURL: an absolute http(s) URL with a host (a webhook receiver, Prometheus).
func isHTTPURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// parseDelays reads a comma-separated list of positive durations.
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
