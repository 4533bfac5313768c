// Package testenv gives each test its own slice of the real services: a
// fresh MariaDB database and a Redis DB number no other test package holds,
// so packages can run in parallel against the shared MariaDB and Redis.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"orderflow/internal/devmode"
	"orderflow/model"
	"orderflow/svc"

	"github.com/redis/go-redis/v9"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// MySQLServer is the shared server's DSN without a database.
func MySQLServer() string {
	if v := os.Getenv("ORDERFLOW_TEST_MYSQL"); v != "" {
		return v
	}
	return "root@tcp(127.0.0.1:3306)/"
}

// RedisAddr is the shared Redis.
func RedisAddr() string {
	if v := os.Getenv("ORDERFLOW_TEST_REDIS"); v != "" {
		return v
	}
	return "127.0.0.1:6379"
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Database creates a fresh, migrated database, dropped when the test ends,
// and returns its DSN.
func Database(t testing.TB) string {
	t.Helper()
	name := "oftest_" + randHex(6)
	admin, err := gorm.Open(mysql.Open(MySQLServer()), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatalf("testenv: connect to MariaDB: %v", err)
	}
	if err := admin.Exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin").Error; err != nil {
		t.Fatalf("testenv: create database: %v", err)
	}
	dsn := MySQLServer() + name
	t.Cleanup(func() {
		admin.Exec("DROP DATABASE IF EXISTS " + name)
		if sqlDB, err := admin.DB(); err == nil {
			sqlDB.Close()
		}
	})
	db, err := model.Open(dsn, model.PoolConfig{MaxOpen: 4})
	if err != nil {
		t.Fatalf("testenv: open %s: %v", name, err)
	}
	defer func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	}()
	if _, err := model.Migrate(context.Background(), db); err != nil {
		t.Fatalf("testenv: migrate: %v", err)
	}
	return dsn
}

// Ledger opens a fresh, migrated database (Database) as the model layer
// opens it, closed and dropped when the test ends: the one setup of the
// domain packages' tests that talk to a real ledger.
func Ledger(t testing.TB) *gorm.DB {
	t.Helper()
	db, err := model.Open(Database(t), model.PoolConfig{MaxOpen: 4})
	if err != nil {
		t.Fatalf("testenv: open the ledger: %v", err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	})
	return db
}

// RedisDB reserves a Redis DB number (1..15) on the shared server for the
// test's life, flushed before use. DB 0 holds the reservations and is left
// to the running system.
func RedisDB(t testing.TB) int {
	t.Helper()
	ctx := context.Background()
	ctl := redis.NewClient(&redis.Options{Addr: RedisAddr()})
	defer ctl.Close()
	owner := randHex(8)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		for n := 1; n <= 15; n++ {
			key := "orderflow:testdb:" + strconv.Itoa(n)
			ok, err := ctl.SetNX(ctx, key, owner, 20*time.Minute).Result()
			if err != nil {
				t.Fatalf("testenv: reserve redis db: %v", err)
			}
			if !ok {
				continue
			}
			c := redis.NewClient(&redis.Options{Addr: RedisAddr(), DB: n})
			err = c.FlushDB(ctx).Err()
			c.Close()
			if err != nil {
				t.Fatalf("testenv: flush redis db %d: %v", n, err)
			}
			t.Cleanup(func() {
				c := redis.NewClient(&redis.Options{Addr: RedisAddr()})
				defer c.Close()
				if v, _ := c.Get(ctx, key).Result(); v == owner {
					c.Del(ctx, key)
				}
			})
			return n
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("testenv: no free Redis DB number in 2 minutes")
	return 0
}

// Config is a valid configuration on a fresh database and Redis DB, with
// every interval short so tests wait milliseconds, not minutes.
func Config(t testing.TB) svc.Config {
	t.Helper()
	c := svc.Defaults()
	c.MySQLDSN = Database(t)
	c.RedisAddr = RedisAddr()
	c.RedisDB = RedisDB(t)
	return shortIntervals(t, c)
}

// EmbeddedConfig is Config on the dev mode's embedded services: a fresh
// SQLite ledger in the test's temporary directory and an in-process Redis
// of its own.
func EmbeddedConfig(t testing.TB) svc.Config {
	t.Helper()
	c := svc.Defaults()
	c.SQLitePath = filepath.Join(t.TempDir(), "ledger.db")
	db, err := model.OpenSQLite(c.SQLitePath, model.PoolConfig{MaxOpen: 1})
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	_, err = model.Migrate(context.Background(), db)
	if sqlDB, e := db.DB(); e == nil {
		sqlDB.Close()
	}
	if err != nil {
		t.Fatalf("testenv: migrate: %v", err)
	}
	m, err := devmode.StartRedis("127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(m.Close)
	c.RedisAddr = m.Addr()
	return shortIntervals(t, c)
}

func shortIntervals(t testing.TB, c svc.Config) svc.Config {
	t.Helper()
	c.HTTPAddr = "127.0.0.1:0"
	c.AdminToken = "test-admin-token-" + randHex(8)
	c.PaySecret = "test-pay-secret"
	c.LogLevel = "warn"
	c.LogFormat = "console"
	c.DBMaxOpen = 16
	c.ClaimTimeout = svc.Duration(3 * time.Second)
	c.ActivateTimeout = svc.Duration(2 * time.Second)
	c.SweepInterval = svc.Duration(time.Second)
	c.ActivateRetryDelay = svc.Duration(50 * time.Millisecond)
	c.RelayInterval = svc.Duration(100 * time.Millisecond)
	c.TaskCheckInterval = svc.Duration(20 * time.Millisecond)
	c.DelayedTaskCheckInterval = svc.Duration(50 * time.Millisecond)
	c.ShutdownTimeout = svc.Duration(5 * time.Second)
	c.PayTimeout = svc.Duration(500 * time.Millisecond)
	c.RefundRetryDelays = "20ms,50ms,100ms,100ms"
	c.ReconcileGrace = svc.Duration(time.Second)
	if err := c.Validate(); err != nil {
		t.Fatalf("testenv: config: %v", err)
	}
	return c
}

// Env turns a config into ORDERFLOW_* variables for a child process.
func Env(c svc.Config) []string {
	return append(payEnv(c), envCore(c)...)
}

// payEnv is the payment providers' settings that are set.
func payEnv(c svc.Config) []string {
	var out []string
	for k, v := range map[string]string{
		"PAY_PROVIDERS": c.PayProviders, "CURRENCY": c.Currency, "PAY_QUERY_AFTER": c.PayQueryAfter.D().String(),
		"ALIPAY_APP_ID": c.AlipayAppID, "ALIPAY_PRIVATE_KEY": c.AlipayPrivateKey, "ALIPAY_PUBLIC_KEY": c.AlipayPublicKey,
		"ALIPAY_GATEWAY_URL": c.AlipayGatewayURL, "ALIPAY_NOTIFY_URL": c.AlipayNotifyURL,
		"WECHAT_MCH_ID": c.WechatMchID, "WECHAT_APP_ID": c.WechatAppID, "WECHAT_CERT_SERIAL": c.WechatCertSerial,
		"WECHAT_PRIVATE_KEY": c.WechatPrivateKey, "WECHAT_APIV3_KEY": c.WechatAPIv3Key,
		"WECHAT_PLATFORM_PUBLIC_KEY": c.WechatPlatformPublicKey, "WECHAT_PLATFORM_PUBLIC_KEY_ID": c.WechatPlatformPublicKeyID,
		"WECHAT_API_URL": c.WechatAPIURL, "WECHAT_NOTIFY_URL": c.WechatNotifyURL,
		"STRIPE_SECRET_KEY": c.StripeSecretKey, "STRIPE_WEBHOOK_SECRET": c.StripeWebhookSecret, "STRIPE_API_URL": c.StripeAPIURL,
	} {
		if v != "" {
			out = append(out, "ORDERFLOW_"+k+"="+v)
		}
	}
	return out
}

func envCore(c svc.Config) []string {
	return append(os.Environ(),
		"ORDERFLOW_CONFIG=/nonexistent",
		"ORDERFLOW_MYSQL_DSN="+c.MySQLDSN,
		"ORDERFLOW_REDIS_ADDR="+c.RedisAddr,
		"ORDERFLOW_REDIS_DB="+strconv.Itoa(c.RedisDB),
		"ORDERFLOW_HTTP_ADDR="+c.HTTPAddr,
		"ORDERFLOW_ADMIN_TOKEN="+c.AdminToken,
		"ORDERFLOW_ADMIN_TOKENS="+c.AdminTokens,
		"ORDERFLOW_PAY_SECRET="+c.PaySecret,
		"ORDERFLOW_LOG_LEVEL="+c.LogLevel,
		"ORDERFLOW_LOG_FORMAT="+c.LogFormat,
		"ORDERFLOW_CLAIM_TIMEOUT="+c.ClaimTimeout.D().String(),
		"ORDERFLOW_WORKER_LEASE="+c.WorkerLease.D().String(),
		"ORDERFLOW_ACTIVATE_TIMEOUT="+c.ActivateTimeout.D().String(),
		"ORDERFLOW_SWEEP_INTERVAL="+c.SweepInterval.D().String(),
		"ORDERFLOW_SWEEP_PAGE_SIZE="+strconv.Itoa(c.SweepPageSize),
		"ORDERFLOW_ACTIVATE_RETRY_DELAY="+c.ActivateRetryDelay.D().String(),
		"ORDERFLOW_RELAY_INTERVAL="+c.RelayInterval.D().String(),
		"ORDERFLOW_TASK_CHECK_INTERVAL="+c.TaskCheckInterval.D().String(),
		"ORDERFLOW_DELAYED_TASK_CHECK_INTERVAL="+c.DelayedTaskCheckInterval.D().String(),
		"ORDERFLOW_SHUTDOWN_TIMEOUT="+c.ShutdownTimeout.D().String(),
		"ORDERFLOW_MAX_ATTEMPTS="+strconv.Itoa(c.MaxAttempts),
		"ORDERFLOW_PAY_URL="+c.PayURL,
		"ORDERFLOW_PAY_TIMEOUT="+c.PayTimeout.D().String(),
		"ORDERFLOW_REFUND_RETRY_DELAYS="+c.RefundRetryDelays,
		"ORDERFLOW_RECONCILE_SCHEDULE="+c.ReconcileSchedule,
		"ORDERFLOW_RECONCILE_GRACE="+c.ReconcileGrace.D().String(),
		"ORDERFLOW_ORDER_TTL="+c.OrderTTL.D().String(),
		"ORDERFLOW_MAX_PENDING="+strconv.Itoa(c.MaxPending),
		fmt.Sprintf("ORDERFLOW_CONCURRENCY=%d", c.Concurrency),
	)
}
