package chaos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Timing of the system under test: every interval short, so a crash or an
// outage is noticed and repaired in seconds.
const (
	longTTL  = 15 * time.Second // orders created through the main API
	shortTTL = 4 * time.Second  // orders created through the short-life API
)

// crashWindows widens the product's crash windows (claim held, effect
// applied but not finalized, group closed but not charged, charge
// transaction open) with the product's own failpoints, so a kill -9 of a
// worker lands inside a step instead of between steps.
//
// Each worker start also fails its first six deliveries, and workers give
// an order up after 3 attempts, so some orders end failed and the
// operator's retry and refund paths run too.
const crashWindows = "activate/after-claim=sleep(100ms);activate/after-effect=sleep(300ms);" +
	"group/after-close=sleep(300ms);group/charge=sleep(100ms);activate/deliver=6*error"

// The periodic jobs' periods: the sweep heals, the reconciliation is rare
// (as in production, where it is daily), so a run shows what the sweep heals.
const (
	sweepEvery     = 2 * time.Second
	reconcileEvery = 20 * time.Second
)

// cluster is the whole system as separate OS processes: a private MariaDB
// and Redis, the payment simulator behind a cuttable proxy, two API
// processes (one creating orders with a 4 s life) and the workers.
type cluster struct {
	dir     string // logs
	datadir string // MariaDB data (may live in /dev/shm)
	bin     string
	out     *progress

	db      *mariaDB
	redis   *redisServer
	sim     *proc
	simPort int
	simURL  string // the simulator itself (stats)
	proxy   *proxy // what orderflow and the clients use to reach the simulator
	// ali is the Alipay fake, its proxy and notification relay in an
	// Alipay run (alipay.go); nil in a simulator-only run.
	ali     *alipayRig
	apis    []*proc
	apiURLs []string
	workers []*proc
	wURLs   []string

	adminToken string
	paySecret  string
	dsn        string

	notify   *http.Server
	notified atomic.Int64
	// groupRetries receives groups whose settlement ran out of retries, from
	// the admin's notifications: the operator retries them.
	groupRetries chan string

	// ha holds the Galera cluster and the Sentinel group of an HA run
	// (ha.go); db and redis are nil then.
	ha *haServers

	supervisorStop context.CancelFunc
	supervisorDone sync.WaitGroup
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type clusterConfig struct {
	dir, datadir, bin string
	seed              int64
	workers           int
	ha                bool
	provider          string // ProviderPaysim or ProviderAlipay
	out               *progress
}

// startServers starts the private MariaDB and Redis.
func (c *cluster) startServers(ctx context.Context, cc clusterConfig, port func() int) error {
	var err error
	if c.db, err = newMariaDB(cc.datadir, cc.dir, port()); err != nil {
		return err
	}
	if err := c.db.proc.Start(); err != nil {
		return err
	}
	if err := c.db.WaitReady(ctx, 60*time.Second); err != nil {
		return err
	}
	redisDir := filepath.Join(cc.dir, "redis")
	if err := os.MkdirAll(redisDir, 0o755); err != nil {
		return err
	}
	if c.redis, err = newRedis(redisDir, cc.dir, port()); err != nil {
		return err
	}
	if err := c.redis.proc.Start(); err != nil {
		return err
	}
	if err := c.redis.WaitReady(ctx, 10*time.Second); err != nil {
		return err
	}
	c.out.Printf("mariadb :%d (data %s), redis :%d", c.db.port, cc.datadir, c.redis.port)
	return nil
}

func startCluster(ctx context.Context, cc clusterConfig) (*cluster, error) {
	c := &cluster{dir: cc.dir, datadir: cc.datadir, bin: cc.bin, out: cc.out,
		adminToken: "chaos-admin-" + randHex(12), paySecret: "chaos-pay-" + randHex(12),
		groupRetries: make(chan string, 1000)}
	taken := map[int]bool{}
	port := func() int {
		p, err := sparePort(taken)
		if err != nil {
			panic(err)
		}
		return p
	}
	var err error
	if cc.ha {
		if err := c.startHAServers(ctx, cc); err != nil {
			return c, err
		}
	} else if err := c.startServers(ctx, cc, port); err != nil {
		return c, err
	}

	// The notification webhook: acknowledges everything.
	nln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return c, err
	}
	c.notify = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.notified.Add(1)
		var n struct {
			Kind, Recipient, Subject, Message string
		}
		if json.NewDecoder(r.Body).Decode(&n) == nil && n.Kind == "group_failed" && n.Recipient == "admin" &&
			strings.Contains(n.Message, "retries exhausted") {
			if f := strings.Fields(n.Subject); len(f) > 1 {
				c.groupRetries <- f[1] // "Group-buy <group_no> could not be settled"
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = c.notify.Serve(nln) }()

	if c.ha == nil {
		c.dsn = c.db.DSN("orderflow")
	}
	apiPorts := []int{port(), port()}
	for _, p := range apiPorts {
		c.apiURLs = append(c.apiURLs, "http://127.0.0.1:"+strconv.Itoa(p))
	}
	c.simPort = port()
	c.simURL = "http://127.0.0.1:" + strconv.Itoa(c.simPort)
	c.proxy = newProxy(port(), "127.0.0.1:"+strconv.Itoa(c.simPort))
	if err := c.proxy.Restore(); err != nil {
		return c, err
	}

	base := c.baseEnv("http://"+nln.Addr().String(), "http://"+c.proxy.Addr())
	if cc.provider == ProviderAlipay {
		var aliEnv []string
		c.ali, aliEnv, err = startAlipay(cc.dir, port, c.apiURLs)
		if err != nil {
			return c, fmt.Errorf("alipay fake: %w", err)
		}
		base = append(base, aliEnv...)
	}
	// Migrate once (creates the database).
	mig := exec.CommandContext(ctx, filepath.Join(cc.bin, "api"), "migrate")
	mig.Env = append(base, "ORDERFLOW_HTTP_ADDR=127.0.0.1:0", "ORDERFLOW_ORDER_TTL="+longTTL.String())
	if out, err := mig.CombinedOutput(); err != nil {
		return c, fmt.Errorf("api migrate: %v\n%s", err, out)
	}

	simEnv := append(os.Environ(),
		"ORDERFLOW_PAYSIM_ADDR=127.0.0.1:"+strconv.Itoa(c.simPort),
		"ORDERFLOW_PAY_SECRET="+c.paySecret,
		"ORDERFLOW_API_URL="+c.apiURLs[0],
		"ORDERFLOW_PAYSIM_FAIL_RATE=0.2",
		"ORDERFLOW_PAYSIM_TIMEOUT_RATE=0.05",
		"ORDERFLOW_PAYSIM_TIMEOUT_DELAY=800ms",
		"ORDERFLOW_PAYSIM_CALLBACK_DELAY=300ms",
		"ORDERFLOW_PAYSIM_SEED="+strconv.FormatInt(cc.seed, 10),
	)
	c.sim = newProc("paysim", filepath.Join(cc.bin, "paysim"), nil, simEnv, filepath.Join(cc.dir, "paysim.log"))

	for i, ttl := range []time.Duration{longTTL, shortTTL} {
		env := append(append(append([]string{}, base...), c.haEnv(i, false)...), "ORDERFLOW_HTTP_ADDR="+strings.TrimPrefix(c.apiURLs[i], "http://"), "ORDERFLOW_ORDER_TTL="+ttl.String())
		name := fmt.Sprintf("api-%d", i+1)
		c.apis = append(c.apis, newProc(name, filepath.Join(cc.bin, "api"), nil, env, filepath.Join(cc.dir, name+".log")))
	}
	for i := range cc.workers {
		addr := "127.0.0.1:" + strconv.Itoa(port())
		env := append(append(append([]string{}, base...), c.haEnv(len(c.apis)+i, true)...), "ORDERFLOW_HTTP_ADDR="+addr, "ORDERFLOW_ORDER_TTL="+longTTL.String(),
			"ORDERFLOW_FAILPOINTS="+crashWindows, "ORDERFLOW_MAX_ATTEMPTS=3")
		name := fmt.Sprintf("worker-%d", i+1)
		c.workers = append(c.workers, newProc(name, filepath.Join(cc.bin, "queue"), nil, env, filepath.Join(cc.dir, name+".log")))
		c.wURLs = append(c.wURLs, "http://"+addr)
	}
	for _, p := range c.services() {
		if err := p.Start(); err != nil {
			return c, err
		}
	}
	sctx, stop := context.WithCancel(context.Background())
	c.supervisorStop = stop
	c.supervisorDone.Add(1)
	go func() {
		defer c.supervisorDone.Done()
		supervise(sctx, 250*time.Millisecond, c.all()...)
	}()
	if err := c.waitUp(ctx, 60*time.Second); err != nil {
		return c, err
	}
	return c, nil
}

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

// panics scans every orderflow log for panics and data races.
func (c *cluster) panics() []string {
	var out []string
	for _, p := range c.services() {
		b, err := os.ReadFile(p.log)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "panic:") || strings.HasPrefix(line, "fatal error:") || strings.Contains(line, "WARNING: DATA RACE") {
				out = append(out, p.name+": "+line)
			}
		}
	}
	return out
}

// recoveryMarkers are log messages that show a repair path ran.
var recoveryMarkers = []struct{ label, msg string }{
	{"stuck claims reset", "stuck claim reset to paid and re-queued"},
	{"lost workers taken over", "fleet: worker lost; its claims released"},
	{"lost workers' claims released", "lost worker's claim released and re-queued"},
	{"lost workers' tasks put back", "fleet: tasks of a lost worker put back"},
	{"claims taken over", "took over own claim after lease expiry"},
	{"claims lost before finalize", "claim lost before finalize"},
	{"paid orders re-queued", "paid order had no live task; re-queued"},
	{"refunds re-queued", "processing refund had no live task; re-queued"},
	{"settlements kept in Redis (ledger down)", "ledger is unreachable; kept in the pending set"},
	{"exhausted settlements flushed", "exhausted settlement written to the ledger"},
	{"epoch-triggered reconciliations", "Redis epoch marker was missing"},
	{"missed periodic slots run at start", "periodic slot was missed"},
	{"outbox rows drained by the poller", "outbox drained by poller"},
	{"refunds to manual", "refund moved to manual"},
	{"lost notifications found by query", "payment found by query: its notification was lost"},
	{"orders failed", `"order failed"`},
	{"short counters repaired at create", "stock counter was below the ledger; repaired from it"},
	{"counters reset by the sweep", "stock counter differed from the ledger for a whole pass"},
	{"close restores run again", "stock counter restore failed; the close task runs again"},
}

// sweptRE reads how many objects a sweep pass re-queued from its log line.
var sweptRE = regexp.MustCompile(`"sweep pass".*?"requeued":\s*(\d+)`)

// recoveries counts, over every orderflow log, how often each repair path ran.
func (c *cluster) recoveries() map[string]int {
	out := map[string]int{}
	for _, p := range c.services() {
		b, err := os.ReadFile(p.log)
		if err != nil {
			continue
		}
		text := string(b)
		for _, m := range recoveryMarkers {
			if n := strings.Count(text, m.msg); n > 0 {
				out[m.label] += n
			}
		}
		for _, m := range sweptRE.FindAllStringSubmatch(text, -1) {
			if n, _ := strconv.Atoi(m[1]); n > 0 {
				out["objects re-queued by the sweep"] += n
			}
		}
	}
	return out
}
