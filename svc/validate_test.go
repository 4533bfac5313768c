package svc_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"orderflow/svc"

	"github.com/google/go-cmp/cmp"
)

// validConfig is the defaults with the settings that have none.
func validConfig() svc.Config {
	c := svc.Defaults()
	c.MySQLDSN = "root@tcp(127.0.0.1:3306)/orderflow"
	c.AdminToken = "admin-token-0123456789"
	c.PaySecret = "s"
	return c
}

// TestValidate: each bad value stops start-up with one line that names the
// ORDERFLOW_* setting and says what is wanted (TestLoadBadSettingNamesIt
// covers the same through files and the environment).
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(*svc.Config)
		wantErr string // "" for a valid configuration
	}{
		{"defaults with secrets", func(*svc.Config) {}, ""},
		{"sqlite instead of mysql", func(c *svc.Config) { c.MySQLDSN, c.SQLitePath = "", "/tmp/of.db" }, ""},
		{"sentinel with master", func(c *svc.Config) { c.RedisMode, c.RedisMaster = "sentinel", "mymaster" }, ""},
		{"cluster", func(c *svc.Config) { c.RedisMode = "cluster" }, ""},
		{"console logs", func(c *svc.Config) { c.LogFormat = "console" }, ""},
		{"admin token of 16", func(c *svc.Config) { c.AdminToken = strings.Repeat("a", 16) }, ""},
		{"named operators alone", func(c *svc.Config) {
			c.AdminToken, c.AdminTokens = "", "ann:viewer:"+strings.Repeat("v", 16)+",root:admin:"+strings.Repeat("r", 16)
		}, ""},
		{"header limits at their bounds", func(c *svc.Config) { c.HTTPMaxHeaderBytes = 1 << 20 }, ""},
		{"redis db 15", func(c *svc.Config) { c.RedisDB = 15 }, ""},
		{"header timeout equal to read timeout", func(c *svc.Config) { c.HTTPReadHeaderTimeout = c.HTTPReadTimeout }, ""},
		{"cron descriptor", func(c *svc.Config) { c.ReconcileSchedule = "@every 10s" }, ""},
		{"metrics behind the admin token on their own port", func(c *svc.Config) {
			c.MetricsAuth, c.MetricsAddr, c.PrometheusURL = "admin", "127.0.0.1:9464", "http://127.0.0.1:9090"
		}, ""},

		{"no ledger", func(c *svc.Config) { c.MySQLDSN = "" }, "setting ORDERFLOW_MYSQL_DSN: missing"},
		{"two ledgers", func(c *svc.Config) { c.SQLitePath = "/tmp/of.db" },
			"setting ORDERFLOW_SQLITE_PATH: set either it (the embedded dev ledger) or mysql_dsn, not both"},
		{"no redis", func(c *svc.Config) { c.RedisAddr = "" }, "setting ORDERFLOW_REDIS_ADDR: missing"},
		{"redis mode", func(c *svc.Config) { c.RedisMode = "replica" }, "setting ORDERFLOW_REDIS_MODE: want standalone, sentinel or cluster"},
		{"sentinel without master", func(c *svc.Config) { c.RedisMode = "sentinel" }, "setting ORDERFLOW_REDIS_MASTER: missing (needed for sentinel)"},
		{"redis db negative", func(c *svc.Config) { c.RedisDB = -1 }, "setting ORDERFLOW_REDIS_DB: want 0..15"},
		{"redis db 16", func(c *svc.Config) { c.RedisDB = 16 }, "setting ORDERFLOW_REDIS_DB: want 0..15"},
		{"no listener", func(c *svc.Config) { c.HTTPAddr = "" }, "setting ORDERFLOW_HTTP_ADDR: missing"},
		{"no admin token", func(c *svc.Config) { c.AdminToken = "" }, "setting ORDERFLOW_ADMIN_TOKEN: missing (or name operators in admin_tokens)"},
		{"admin token of 15", func(c *svc.Config) { c.AdminToken = strings.Repeat("a", 15) }, "setting ORDERFLOW_ADMIN_TOKEN: shorter than 16 characters"},
		{"bad operator entry", func(c *svc.Config) { c.AdminTokens = "ann:root:" + strings.Repeat("v", 16) },
			`setting ORDERFLOW_ADMIN_TOKENS: entry 1: operator "ann": role "root": want viewer, operator or admin`},
		{"operator token of 15", func(c *svc.Config) { c.AdminTokens = "ann:viewer:" + strings.Repeat("v", 15) },
			`setting ORDERFLOW_ADMIN_TOKENS: entry 1: operator "ann": token shorter than 16 characters`},
		{"operator sharing the admin token", func(c *svc.Config) { c.AdminTokens = "ann:viewer:" + c.AdminToken },
			`setting ORDERFLOW_ADMIN_TOKENS: operators "admin" and "ann" share a token`},
		{"no pay secret", func(c *svc.Config) { c.PaySecret = "" }, "setting ORDERFLOW_PAY_SECRET: missing"},
		{"log format", func(c *svc.Config) { c.LogFormat = "text" }, "setting ORDERFLOW_LOG_FORMAT: want json or console"},
		{"metrics auth", func(c *svc.Config) { c.MetricsAuth = "token" }, "setting ORDERFLOW_METRICS_AUTH: want none or admin"},
		{"metrics addr", func(c *svc.Config) { c.MetricsAddr = "9464" }, "setting ORDERFLOW_METRICS_ADDR: want host:port"},
		{"metrics addr is the API's", func(c *svc.Config) { c.MetricsAddr = c.HTTPAddr },
			"setting ORDERFLOW_METRICS_ADDR: must differ from http_addr (leave it unset to serve /metrics there)"},
		{"prometheus url", func(c *svc.Config) { c.PrometheusURL = "prometheus:9090" },
			"setting ORDERFLOW_PROMETHEUS_URL: want an http(s) URL such as http://prometheus:9090"},
		{"max pending", func(c *svc.Config) { c.MaxPending = 0 }, "setting ORDERFLOW_MAX_PENDING: must be at least 1"},
		{"max attempts", func(c *svc.Config) { c.MaxAttempts = 0 }, "setting ORDERFLOW_MAX_ATTEMPTS: must be at least 1"},
		{"concurrency", func(c *svc.Config) { c.Concurrency = 0 }, "setting ORDERFLOW_CONCURRENCY: must be at least 1"},
		{"db pool", func(c *svc.Config) { c.DBMaxOpen = 0 }, "setting ORDERFLOW_DB_MAX_OPEN: must be at least 1"},
		{"refund attempts", func(c *svc.Config) { c.RefundMaxAttempts = 0 }, "setting ORDERFLOW_REFUND_MAX_ATTEMPTS: must be at least 1"},
		{"header bytes too few", func(c *svc.Config) { c.HTTPMaxHeaderBytes = 1<<10 - 1 }, "setting ORDERFLOW_HTTP_MAX_HEADER_BYTES: want 1024..1048576"},
		{"header bytes too many", func(c *svc.Config) { c.HTTPMaxHeaderBytes = 1<<20 + 1 }, "setting ORDERFLOW_HTTP_MAX_HEADER_BYTES: want 1024..1048576"},
		{"negative activate timeout", func(c *svc.Config) { c.ActivateTimeout = -1 },
			"setting ORDERFLOW_ACTIVATE_TIMEOUT: must be a positive duration, or unset to derive it from claim_timeout"},
		{"activate timeout at claim timeout", func(c *svc.Config) { c.ActivateTimeout = c.ClaimTimeout },
			"setting ORDERFLOW_ACTIVATE_TIMEOUT: must be shorter than claim_timeout, or a running activation could be recovered under it"},
		{"sweep page of 0", func(c *svc.Config) { c.SweepPageSize = 0 }, "setting ORDERFLOW_SWEEP_PAGE_SIZE: want 1..10000"},
		{"sweep page of 10001", func(c *svc.Config) { c.SweepPageSize = 10001 }, "setting ORDERFLOW_SWEEP_PAGE_SIZE: want 1..10000"},
		{"webhook URL without a secret", func(c *svc.Config) { c.WebhookURL = "https://shop.example/hooks" },
			"setting ORDERFLOW_WEBHOOK_SECRET: missing (needed when webhook_url is set: every delivery is signed)"},
		{"webhook URL not absolute", func(c *svc.Config) { c.WebhookURL, c.WebhookSecret = "shop.example/hooks", "s" },
			"setting ORDERFLOW_WEBHOOK_URL: want an absolute http:// or https:// URL"},
		{"webhook retry delay of 0", func(c *svc.Config) { c.WebhookRetryDelay = 0 }, "setting ORDERFLOW_WEBHOOK_RETRY_DELAY: must be a positive duration"},
		{"refund delays", func(c *svc.Config) { c.RefundRetryDelays = "1m,,5m" },
			`setting ORDERFLOW_REFUND_RETRY_DELAYS: want comma-separated positive durations, got "1m,,5m"`},
		{"settle delay of zero", func(c *svc.Config) { c.SettleRetryDelays = "1s,0s" },
			`setting ORDERFLOW_SETTLE_RETRY_DELAYS: want comma-separated positive durations, got "1s,0s"`},
		{"header timeout past read timeout", func(c *svc.Config) { c.HTTPReadHeaderTimeout = c.HTTPReadTimeout + 1 },
			"setting ORDERFLOW_HTTP_READ_HEADER_TIMEOUT: must not be longer than http_read_timeout"},
		{"cron", func(c *svc.Config) { c.ReconcileSchedule = "61 * * * *" },
			`setting ORDERFLOW_RECONCILE_SCHEDULE: schedule "61 * * * *": end of range (61) above maximum (59): 61`},
		{"interval of zero", func(c *svc.Config) { c.ReconcileSchedule = "@every 0s" },
			`setting ORDERFLOW_RECONCILE_SCHEDULE: schedule "@every 0s": the interval must be positive`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			tc.mutate(&c)
			var got string
			if err := c.Validate(); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, got); diff != "" {
				t.Errorf("Validate error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidateEveryDurationIsPositive: every duration setting but
// activate_timeout (0 means derive it) must be positive, and its error names
// it — a new duration field that Validate forgets fails here.
func TestValidateEveryDurationIsPositive(t *testing.T) {
	typ := reflect.TypeFor[svc.Config]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Type != reflect.TypeFor[svc.Duration]() || f.Name == "ActivateTimeout" {
			continue
		}
		key := f.Tag.Get("yaml")
		for _, d := range []time.Duration{0, -time.Second} {
			t.Run(key+"="+d.String(), func(t *testing.T) {
				c := validConfig()
				reflect.ValueOf(&c).Elem().Field(i).Set(reflect.ValueOf(svc.Duration(d)))
				want := "setting " + svc.EnvPrefix + strings.ToUpper(key) + ": must be a positive duration"
				var got string
				if err := c.Validate(); err != nil {
					got = err.Error()
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("Validate error (-want +got):\n%s", diff)
				}
			})
		}
	}
}
