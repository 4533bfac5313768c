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
