package chaos

import (
	"context"
	"os"
	"strings"
	"sync"
	"time"
)

// Running the cluster: each process's environment, healing what a fault
// left down, waiting for it to answer, stopping it.

// baseEnv is every process's configuration.
func (c *cluster) baseEnv(notifyURL, payURL string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ORDERFLOW_") {
			env = append(env, kv)
		}
	}
	env = append(env, c.redisEnv()...)
	return append(env,
		"ORDERFLOW_CONFIG=/nonexistent",
		"ORDERFLOW_MYSQL_DSN="+c.dsn,
		"ORDERFLOW_DB_MAX_OPEN=16",
		"ORDERFLOW_REDIS_ADDR="+c.redisAddr(),
		"ORDERFLOW_REDIS_DB=0",
		"ORDERFLOW_ADMIN_TOKEN="+c.adminToken,
		"ORDERFLOW_PAY_SECRET="+c.paySecret,
		"ORDERFLOW_PAY_URL="+payURL,
		"ORDERFLOW_NOTIFY_URL="+notifyURL,
		"ORDERFLOW_LOG_LEVEL=info",
		"ORDERFLOW_LOG_FORMAT=json",
		"ORDERFLOW_CLAIM_TIMEOUT=3s",
		"ORDERFLOW_ACTIVATE_TIMEOUT=2s",
		"ORDERFLOW_RECONCILE_SCHEDULE=@every "+reconcileEvery.String(),
		"ORDERFLOW_SWEEP_INTERVAL="+sweepEvery.String(),
		"ORDERFLOW_RECONCILE_GRACE=1s",
		// The statement step runs the day itself once the ledger is at rest;
		// the daily job (11:00 UTC) must not read it mid-run.
		"ORDERFLOW_STATEMENT_SCHEDULE=@every 1000h",
		"ORDERFLOW_NOTIFY_INTERVAL=1s",
		"ORDERFLOW_MAX_PENDING=20",
		"ORDERFLOW_ACTIVATE_RETRY_DELAY=100ms",
		"ORDERFLOW_REFUND_RETRY_DELAYS=50ms,100ms,200ms,400ms",
		"ORDERFLOW_REFUND_MAX_ATTEMPTS=5",
		"ORDERFLOW_SETTLE_RETRY_DELAYS=100ms,200ms,400ms,800ms,1600ms",
		"ORDERFLOW_PAY_TIMEOUT=500ms",
		"ORDERFLOW_RELAY_INTERVAL=200ms",
		"ORDERFLOW_TASK_CHECK_INTERVAL=50ms",
		"ORDERFLOW_DELAYED_TASK_CHECK_INTERVAL=100ms",
		"ORDERFLOW_SHUTDOWN_TIMEOUT=3s",
		"ORDERFLOW_CONCURRENCY=10",
		// Long enough that a stale order-cache entry is still there to be
		// seen by the view check after quiescence.
		"ORDERFLOW_CACHE_TTL=5m",
	)
}

func (c *cluster) all() []*proc {
	ps := append(c.serverProcs(), c.sim)
	ps = append(ps, c.apis...)
	return append(ps, c.workers...)
}

// services are the processes of orderflow itself (not MariaDB, Redis).
func (c *cluster) services() []*proc {
	ps := append([]*proc{c.sim}, c.apis...)
	return append(ps, c.workers...)
}

// heal brings everything back: every process wanted and running, the
// simulator thawed and reachable.
func (c *cluster) heal(ctx context.Context) error {
	c.sim.Thaw()
	if err := c.proxy.Restore(); err != nil {
		return err
	}
	if c.ali != nil {
		if err := c.ali.proxy.Restore(); err != nil {
			return err
		}
	}
	if c.ha != nil {
		if err := c.ha.cut.Restore(); err != nil {
			return err
		}
	}
	for _, p := range c.all() {
		p.Want()
	}
	return c.waitUp(ctx, 90*time.Second)
}

// waitUp waits until every process answers.
func (c *cluster) waitUp(ctx context.Context, within time.Duration) error {
	if err := c.waitServers(ctx, within); err != nil {
		return err
	}
	if err := waitHTTP(ctx, c.simURL+"/admin/config", within); err != nil {
		return err
	}
	for _, u := range append(append([]string{}, c.apiURLs...), c.wURLs...) {
		if err := waitHTTP(ctx, u+"/healthz", within); err != nil {
			return err
		}
	}
	return nil
}

// stop ends every process: orderflow gracefully, the servers with SIGKILL
// (they are ours and about to be deleted).
func (c *cluster) stop() {
	if c.supervisorStop != nil {
		c.supervisorStop()
		c.supervisorDone.Wait()
	}
	var wg sync.WaitGroup
	if c.sim != nil {
		for _, p := range c.services() {
			wg.Add(1)
			go func() { defer wg.Done(); p.Stop(8 * time.Second) }()
		}
	}
	wg.Wait()
	c.stopServers()
	if c.notify != nil {
		_ = c.notify.Close()
	}
	if c.proxy != nil {
		c.proxy.Cut()
	}
	if c.ali != nil {
		c.ali.stop()
	}
}
