package svc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"orderflow/svc"

	"github.com/google/go-cmp/cmp"
)

// baseYAML is a complete, valid configuration file.
const baseYAML = `
mysql_dsn: "root@tcp(127.0.0.1:3306)/orderflow"
redis_addr: 127.0.0.1:6379
admin_token: yaml-admin-token-0123456789
pay_secret: yaml-pay-secret
order_ttl: 10m
max_pending: 7
`

func writeYAML(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "api.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoadEnvOverridesYAML: an ORDERFLOW_* variable wins over the file, the
// file wins over the defaults, and untouched keys keep their defaults.
func TestLoadEnvOverridesYAML(t *testing.T) {
	path := writeYAML(t, baseYAML)
	cfg, warnings, err := svc.Load(path, []string{
		"ORDERFLOW_ORDER_TTL=30s",
		"ORDERFLOW_REDIS_DB=3",
		"ORDERFLOW_RECONCILE_SCHEDULE=@every 10s",
		"PATH=/usr/bin", // not ours: ignored silently
	})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings = %q, want none", warnings)
	}
	type knobs struct {
		OrderTTL, ClaimTimeout time.Duration
		MaxPending, RedisDB    int
		Schedule, DSN, Admin   string
	}
	got := knobs{cfg.OrderTTL.D(), cfg.ClaimTimeout.D(), cfg.MaxPending, cfg.RedisDB, cfg.ReconcileSchedule, cfg.MySQLDSN, cfg.AdminToken}
	want := knobs{
		OrderTTL:     30 * time.Second, // env over YAML's 10m
		ClaimTimeout: 10 * time.Minute, // default
		MaxPending:   7,                // YAML over the default 5
		RedisDB:      3,
		Schedule:     "@every 10s",
		DSN:          "root@tcp(127.0.0.1:3306)/orderflow",
		Admin:        "yaml-admin-token-0123456789",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("loaded config (-want +got):\n%s", diff)
	}
}

// TestLoadDefaultsMatchSPEC: with nothing but the required secrets, the
// timing knobs are SPEC's defaults.
func TestLoadDefaultsMatchSPEC(t *testing.T) {
	cfg, _, err := svc.Load("", []string{
		"ORDERFLOW_MYSQL_DSN=root@tcp(127.0.0.1:3306)/x",
		"ORDERFLOW_ADMIN_TOKEN=admin-token-0123456789",
		"ORDERFLOW_PAY_SECRET=s",
	})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	got := map[string]any{
		"order_ttl": cfg.OrderTTL.D(), "claim_timeout": cfg.ClaimTimeout.D(), "sweep_interval": cfg.SweepInterval.D(), "sweep_page_size": cfg.SweepPageSize,
		"reconcile_grace": cfg.ReconcileGrace.D(), "max_pending": cfg.MaxPending, "max_attempts": cfg.MaxAttempts,
	}
	want := map[string]any{
		"order_ttl": 15 * time.Minute, "claim_timeout": 10 * time.Minute, "sweep_interval": time.Minute, "sweep_page_size": 500,
		"reconcile_grace": 15 * time.Minute, "max_pending": 5, "max_attempts": 10,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if cfg.ActivateDeadline() >= cfg.ClaimTimeout.D() {
		t.Errorf("default activation deadline %v is not shorter than claim_timeout %v", cfg.ActivateDeadline(), cfg.ClaimTimeout.D())
	}
}

// TestActivateTimeoutFollowsClaimTimeout: an unset activate_timeout is
// derived from the claim timeout, so setting only ORDERFLOW_CLAIM_TIMEOUT
// (even below the old fixed default of 2m) starts every process; only an
// explicit value that conflicts stops start-up. The shipped etc/*.yaml files
// are loaded as the processes load them.
func TestActivateTimeoutFollowsClaimTimeout(t *testing.T) {
	secrets := []string{"ORDERFLOW_MYSQL_DSN=root@tcp(127.0.0.1:3306)/orderflow", "ORDERFLOW_ADMIN_TOKEN=env-admin-token-0123456789", "ORDERFLOW_PAY_SECRET=s"}
	for _, tc := range []struct {
		name    string
		file    string
		env     []string
		want    time.Duration
		wantErr string
	}{
		{name: "queue.yaml, claim 5s alone", file: "../etc/queue.yaml", env: []string{"ORDERFLOW_CLAIM_TIMEOUT=5s"}, want: 2500 * time.Millisecond},
		{name: "api.yaml, claim 5s alone", file: "../etc/api.yaml", env: []string{"ORDERFLOW_CLAIM_TIMEOUT=5s"}, want: 2500 * time.Millisecond},
		{name: "defaults", file: "../etc/queue.yaml", want: 2 * time.Minute},
		{name: "claim 1m: half of it", env: []string{"ORDERFLOW_CLAIM_TIMEOUT=1m"}, want: 30 * time.Second},
		{name: "claim 1h: capped at 2m", env: []string{"ORDERFLOW_CLAIM_TIMEOUT=1h"}, want: 2 * time.Minute},
		{name: "explicit and shorter", env: []string{"ORDERFLOW_CLAIM_TIMEOUT=5s", "ORDERFLOW_ACTIVATE_TIMEOUT=4s"}, want: 4 * time.Second},
		{name: "explicit and conflicting", env: []string{"ORDERFLOW_CLAIM_TIMEOUT=5s", "ORDERFLOW_ACTIVATE_TIMEOUT=5s"}, wantErr: "setting ORDERFLOW_ACTIVATE_TIMEOUT:"},
		{name: "explicit and negative", env: []string{"ORDERFLOW_ACTIVATE_TIMEOUT=-1s"}, wantErr: "setting ORDERFLOW_ACTIVATE_TIMEOUT:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _, err := svc.Load(tc.file, append(tc.env, secrets...))
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("Load error = %v, want one starting %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if got := cfg.ActivateDeadline(); got != tc.want {
				t.Errorf("activation deadline = %v, want %v", got, tc.want)
			}
			if cfg.ActivateDeadline() >= cfg.ClaimTimeout.D() {
				t.Errorf("activation deadline %v not below claim timeout %v", cfg.ActivateDeadline(), cfg.ClaimTimeout.D())
			}
		})
	}
}

// TestLoadUnknownVariableWarns: an unknown ORDERFLOW_* variable is ignored
// with a warning that names it; start-up goes on.
func TestLoadUnknownVariableWarns(t *testing.T) {
	cfg, warnings, err := svc.Load(writeYAML(t, baseYAML), []string{"ORDERFLOW_FOO=bar", "ORDERFLOW_ORDER_TTL=1m"})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "ORDERFLOW_FOO") {
		t.Errorf("warnings = %q, want one naming ORDERFLOW_FOO", warnings)
	}
	if cfg.OrderTTL.D() != time.Minute {
		t.Errorf("a known variable next to the unknown one was not applied: order_ttl = %v", cfg.OrderTTL.D())
	}
}

// TestLoadBadSettingNamesIt: each bad or missing setting stops Load with one
// line naming the ORDERFLOW_* key to fix.
func TestLoadBadSettingNamesIt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		yaml    string
		env     []string
		wantKey string
		// orKey is another acceptable name for a bad YAML value: its YAML key.
		orKey string
	}{
		{name: "missing dsn", yaml: strings.Replace(baseYAML, `mysql_dsn: "root@tcp(127.0.0.1:3306)/orderflow"`, "", 1), wantKey: "ORDERFLOW_MYSQL_DSN"},
		{name: "dsn emptied by env", yaml: baseYAML, env: []string{"ORDERFLOW_MYSQL_DSN="}, wantKey: "ORDERFLOW_MYSQL_DSN"},
		{name: "missing admin token", yaml: strings.Replace(baseYAML, "admin_token: yaml-admin-token-0123456789", "", 1), wantKey: "ORDERFLOW_ADMIN_TOKEN"},
		{name: "missing pay secret", yaml: strings.Replace(baseYAML, "pay_secret: yaml-pay-secret", "", 1), wantKey: "ORDERFLOW_PAY_SECRET"},
		{name: "bad duration in env", yaml: baseYAML, env: []string{"ORDERFLOW_CLAIM_TIMEOUT=ten minutes"}, wantKey: "ORDERFLOW_CLAIM_TIMEOUT"},
		{name: "zero duration in env", yaml: baseYAML, env: []string{"ORDERFLOW_ORDER_TTL=0s"}, wantKey: "ORDERFLOW_ORDER_TTL"},
		{name: "negative duration in env", yaml: baseYAML, env: []string{"ORDERFLOW_RELAY_INTERVAL=-1s"}, wantKey: "ORDERFLOW_RELAY_INTERVAL"},
		{name: "bad duration in yaml", yaml: baseYAML + "notify_interval: soon\n", wantKey: "ORDERFLOW_NOTIFY_INTERVAL", orKey: "notify_interval"},
		{name: "bad integer", yaml: baseYAML, env: []string{"ORDERFLOW_MAX_PENDING=five"}, wantKey: "ORDERFLOW_MAX_PENDING"},
		{name: "zero max pending", yaml: baseYAML, env: []string{"ORDERFLOW_MAX_PENDING=0"}, wantKey: "ORDERFLOW_MAX_PENDING"},
		{name: "activate timeout equals claim timeout", yaml: baseYAML, env: []string{"ORDERFLOW_ACTIVATE_TIMEOUT=10m"}, wantKey: "ORDERFLOW_ACTIVATE_TIMEOUT"},
		{name: "activate timeout above claim timeout", yaml: baseYAML, env: []string{"ORDERFLOW_CLAIM_TIMEOUT=30s", "ORDERFLOW_ACTIVATE_TIMEOUT=1m"}, wantKey: "ORDERFLOW_ACTIVATE_TIMEOUT"},
		{name: "bad cron", yaml: baseYAML, env: []string{"ORDERFLOW_RECONCILE_SCHEDULE=every day at 3"}, wantKey: "ORDERFLOW_RECONCILE_SCHEDULE"},
		{name: "bad redis mode", yaml: baseYAML, env: []string{"ORDERFLOW_REDIS_MODE=replicated"}, wantKey: "ORDERFLOW_REDIS_MODE"},
		{name: "sentinel without master", yaml: baseYAML, env: []string{"ORDERFLOW_REDIS_MODE=sentinel"}, wantKey: "ORDERFLOW_REDIS_MASTER"},
		{name: "redis db out of range", yaml: baseYAML, env: []string{"ORDERFLOW_REDIS_DB=16"}, wantKey: "ORDERFLOW_REDIS_DB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := svc.Load(writeYAML(t, tc.yaml), tc.env)
			if err == nil {
				t.Fatalf("Load accepted it, want an error naming %s", tc.wantKey)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.wantKey) && (tc.orKey == "" || !strings.Contains(msg, tc.orKey)) {
				t.Errorf("error %q does not name %s", msg, tc.wantKey)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
		})
	}
}

// TestRetiredSettingWarns: ORDERFLOW_RECOVERY_INTERVAL (a SPEC setting the
// continuous sweep replaced) still starts, in the environment or in a YAML
// file, with a warning naming the sweep.
func TestRetiredSettingWarns(t *testing.T) {
	for name, tc := range map[string]struct {
		yaml string
		env  []string
	}{
		"env":  {yaml: baseYAML, env: []string{"ORDERFLOW_RECOVERY_INTERVAL=10m"}},
		"yaml": {yaml: baseYAML + "recovery_interval: 10m\n"},
	} {
		t.Run(name, func(t *testing.T) {
			_, warnings, err := svc.Load(writeYAML(t, tc.yaml), tc.env)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], "ORDERFLOW_RECOVERY_INTERVAL") || !strings.Contains(warnings[0], "ORDERFLOW_SWEEP_INTERVAL") {
				t.Errorf("warnings = %q, want one naming ORDERFLOW_RECOVERY_INTERVAL and the sweep", warnings)
			}
		})
	}
}
