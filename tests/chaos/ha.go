package chaos

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// HA fault kinds (cmd/chaos -ha, make test-ha).
const (
	// FaultGaleraKill kills -9 one Galera node; it rejoins by SST.
	FaultGaleraKill = "galera-kill9"
	// FaultRedisFailover freezes the replica, kills the master and lets
	// the sentinels promote the replica: the writes it never received are
	// lost (outbox rows already deleted, tasks, counters).
	FaultRedisFailover = "redis-failover"
	// FaultDBCut cuts one worker's connections to its own node (through a
	// proxy the suite owns): it fails over to the next node in its list.
	FaultDBCut = "db-cut"
)

// HAKinds are the kinds an HA run injects (and must inject).
var HAKinds = []string{FaultWorkerKill, FaultAPIKill, FaultGaleraKill, FaultRedisFailover, FaultDBCut,
	FaultPaysimDown, FaultAPIKillMidCreate}

// haServers are an HA run's servers.
type haServers struct {
	galera    *Galera
	sentinels *Sentinels
	// cut sits between worker-1 and its own node.
	cut     *proxy
	cutNode int

	mu    sync.Mutex
	notes []string
}

func (h *haServers) note(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notes = append(h.notes, fmt.Sprintf(format, args...))
}

// cutProcess is the process (by start order: APIs, then workers) whose
// own node is reached through the cuttable proxy: worker-1.
const cutProcess = 2

func (c *cluster) startHAServers(ctx context.Context, cc clusterConfig) error {
	h := &haServers{}
	c.ha = h
	var err error
	if h.galera, err = StartGalera(ctx, cc.datadir, cc.dir, 3, c.out); err != nil {
		return err
	}
	if h.sentinels, err = StartSentinels(ctx, filepath.Join(cc.dir, "redis"), cc.dir, c.out); err != nil {
		return err
	}
	port, err := sparePort(map[int]bool{})
	if err != nil {
		return err
	}
	h.cutNode = cutProcess % h.galera.Len()
	h.cut = newProxy(port, h.galera.Addr(h.cutNode))
	if err := h.cut.Restore(); err != nil {
		return err
	}
	c.dsn = h.galera.DSN(0, "orderflow")
	return nil
}

// haEnv is process k's settings on an HA run (none otherwise): its own
// node first, the others after it; the sentinels. Workers read with
// wsrep_sync_wait=1, so an order the API paid on another node is seen
// paid when its task arrives (docs/ha.md).
func (c *cluster) haEnv(k int, worker bool) []string {
	if c.ha == nil {
		return nil
	}
	g := c.ha.galera
	var nodes []string
	for j := range g.Len() {
		n := (k + j) % g.Len()
		addr := g.Addr(n)
		if j == 0 && k == cutProcess {
			addr = c.ha.cut.Addr()
		}
		nodes = append(nodes, addr)
	}
	extra := ""
	if worker {
		extra = "&wsrep_sync_wait=1"
	}
	return []string{"ORDERFLOW_MYSQL_DSN=" + ListDSN(nodes, "orderflow", extra)}
}

// redisEnv is the Redis settings beyond the address: Sentinel on an HA run.
func (c *cluster) redisEnv() []string {
	if c.ha == nil {
		return nil
	}
	return []string{"ORDERFLOW_REDIS_MODE=sentinel", "ORDERFLOW_REDIS_MASTER=" + SentinelMaster}
}

// redisAddr is ORDERFLOW_REDIS_ADDR: the server, or the sentinels.
func (c *cluster) redisAddr() string {
	if c.ha != nil {
		return strings.Join(c.ha.sentinels.Addrs(), ",")
	}
	return c.redis.Addr()
}

// redisClient is a client of the (current) Redis master.
func (c *cluster) redisClient() *redis.Client {
	if c.ha != nil {
		return c.ha.sentinels.Client()
	}
	return redis.NewClient(&redis.Options{Addr: c.redis.Addr()})
}

func (c *cluster) serverProcs() []*proc {
	if c.ha != nil {
		return append(c.ha.galera.procs(), c.ha.sentinels.procs()...)
	}
	return []*proc{c.db.proc, c.redis.proc}
}

func (c *cluster) waitServers(ctx context.Context, within time.Duration) error {
	if c.ha == nil {
		if err := c.db.WaitReady(ctx, within); err != nil {
			return err
		}
		return c.redis.WaitReady(ctx, within)
	}
	for i := range c.ha.galera.Len() {
		if err := c.ha.galera.WaitReady(ctx, i, within); err != nil {
			return err
		}
	}
	return pollReady(ctx, within, 100*time.Millisecond, "redis master", func(ctx context.Context) error {
		rdb := c.redisClient()
		defer rdb.Close()
		return rdb.Ping(ctx).Err()
	})
}

func (c *cluster) stopServers() {
	if c.ha != nil {
		if c.ha.sentinels != nil {
			c.ha.sentinels.Stop()
		}
		if c.ha.galera != nil {
			c.ha.galera.Stop()
		}
		if c.ha.cut != nil {
			c.ha.cut.Cut()
		}
		return
	}
	if c.redis != nil {
		c.redis.proc.Kill9()
	}
	if c.db != nil {
		c.db.proc.Kill9()
	}
}

// haSchedule draws an HA run's faults from the seed: every kind, Galera
// kills far enough apart for the node to rejoin by SST in between.
func haSchedule(seed int64, d time.Duration, workers, apis int) []fault {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x4a11))
	counts := map[string]int{FaultWorkerKill: 4, FaultAPIKill: 2, FaultGaleraKill: 2, FaultRedisFailover: 2,
		FaultDBCut: 2, FaultPaysimDown: 1, FaultAPIKillMidCreate: 1}
	between := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rng.Int64N(int64(hi-lo)+1)) }
	start, end := d/10, d*70/100
	var out []fault
	for _, kind := range HAKinds {
		n := counts[kind]
		slot := (end - start) / time.Duration(n)
		for i := range n {
			f := fault{kind: kind, at: start + time.Duration(i)*slot + between(0, slot/2)}
			switch kind {
			case FaultWorkerKill:
				f.target, f.down = rng.IntN(workers), between(200*time.Millisecond, 2*time.Second)
			case FaultAPIKill, FaultAPIKillMidCreate:
				f.target, f.down = rng.IntN(apis), between(500*time.Millisecond, 3*time.Second)
			case FaultGaleraKill:
				f.target, f.down = rng.IntN(3), between(time.Second, 4*time.Second)
			case FaultRedisFailover:
				f.down = between(500*time.Millisecond, 2*time.Second) // how long the replica lags
			case FaultDBCut:
				f.down = between(2*time.Second, 6*time.Second)
			case FaultPaysimDown:
				f.down, f.mode = between(2*time.Second, 5*time.Second), faultSimCut
			}
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out
}

// injectHA injects one of the HA kinds.
func (in *injector) injectHA(ctx context.Context, f fault, wait func()) {
	h := in.c.ha
	switch f.kind {
	case FaultGaleraKill:
		p := h.galera.nodes[f.target].proc
		p.Kill9()
		killed := time.Now()
		wait()
		p.Want() // the supervisor starts it; it rejoins by SST
		err := h.galera.WaitReady(context.WithoutCancel(ctx), f.target, 180*time.Second)
		h.note("galera node %d killed -9, down %s, synced again %s after the kill (err %v)",
			f.target+1, f.down.Round(100*time.Millisecond), time.Since(killed).Round(100*time.Millisecond), err)
	case FaultRedisFailover:
		fo, err := h.sentinels.LossyFailover(context.WithoutCancel(ctx), f.down)
		h.note("redis failover redis-%d → redis-%d: replica lagged %s, %d bytes of writes lost, new master named %s after the kill (err %v)",
			fo.From+1, fo.To+1, f.down.Round(100*time.Millisecond), fo.LostBytes, fo.Took.Round(10*time.Millisecond), err)
	case FaultDBCut:
		h.cut.Cut()
		wait()
		err := h.cut.Restore()
		h.note("worker-1 cut from its node %d for %s (err %v)", h.cutNode+1, f.down.Round(100*time.Millisecond), err)
	}
}

// printHA prints an HA run's fault table.
func (r *Report) printHA(w io.Writer) {
	fmt.Fprintf(w, "\nHA faults (3-node Galera, Redis master + replica + 3 sentinels):\n")
	for _, n := range r.HANotes {
		fmt.Fprintf(w, "  %s\n", n)
	}
}
