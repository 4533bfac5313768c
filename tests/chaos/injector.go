package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"orderflow/internal/infra/failpoint"

	"github.com/redis/go-redis/v9"
)

// injector runs a schedule against a cluster.
type injector struct {
	c    *cluster
	out  *progress
	seed int64

	mu       sync.Mutex
	injected map[string]int
	log      []string

	// takeovers times how long each killed worker's orders wait for another.
	takeovers takeovers
	rdb       redis.UniversalClient // for takeovers (nil until the first kill)
}

// redis is the client the takeover watch reads asynq's worker lists with.
func (in *injector) redis() redis.UniversalClient {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.rdb == nil {
		in.rdb = in.c.redisClient()
	}
	return in.rdb
}

// run injects each kind's faults in order, kinds in parallel (so a Redis
// wipe may overlap a database outage). Every fault that was started is
// healed before run returns, even when ctx ends early.
func (in *injector) run(ctx context.Context, start time.Time, faults []fault) {
	byKind := map[string][]fault{}
	for _, f := range faults {
		byKind[f.kind] = append(byKind[f.kind], f)
	}
	var wg sync.WaitGroup
	for _, fs := range byKind {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, f := range fs {
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Until(start.Add(f.at))):
				}
				in.inject(ctx, f)
			}
		}()
	}
	wg.Wait()
}

func (in *injector) inject(ctx context.Context, f fault) {
	c := in.c
	in.out.Printf("fault: %s", f)
	in.mu.Lock()
	in.injected[f.kind]++
	in.log = append(in.log, fmt.Sprintf("+%5.1fs %s", f.at.Seconds(), f))
	in.mu.Unlock()
	wait := func() {
		select {
		case <-ctx.Done():
		case <-time.After(f.down):
		}
	}
	switch f.kind {
	case FaultWorkerKill:
		ps := c.workers
		if f.target >= 0 {
			ps = []*proc{c.workers[f.target]}
		}
		for _, p := range ps {
			pid := p.Pid()
			p.Kill9()
			if pid != 0 {
				in.takeovers.killed(ctx, c.dsn, in.redis(), p.name, pid, time.Now())
			}
		}
		wait()
		for _, p := range ps {
			p.Want()
		}
	case FaultAPIKill:
		p := c.apis[f.target]
		p.Kill9()
		wait()
		p.Want()
	case FaultRedisWipe:
		c.redis.proc.Kill9()
		wait()
		c.redis.proc.Want() // no persistence: it comes back empty
	case FaultMariaDBKill, FaultMariaDBOutage:
		down := time.Now()
		c.db.proc.Kill9()
		wait()
		c.db.proc.Want()
		// Crash recovery takes a moment; the next database fault waits for it.
		_ = c.db.WaitReady(context.WithoutCancel(ctx), 60*time.Second)
		in.takeovers.ledgerDown(down, time.Now())
	case FaultRedisPartial:
		lost, err := c.redis.forgetShare(ctx, in.rng(f), f.share)
		in.out.Printf("redis-partial: deleted %d tasks, %d stock counters and %d stock keys beside them (err %v)", lost.tasks, lost.counters, lost.beside, err)
	case FaultWorkersAcrossSlot:
		// Down from just before a reconciliation slot to just after it.
		slot := time.Now().Truncate(reconcileEvery).Add(reconcileEvery)
		sleep(ctx, time.Until(slot.Add(-700*time.Millisecond)))
		for _, p := range c.workers {
			p.Kill9()
		}
		sleep(ctx, time.Until(slot.Add(time.Second)))
		for _, p := range c.workers {
			p.Want()
		}
	case FaultAPIKillMidCreate:
		// The failpoint exits at the restarted API's first stock take.
		if err := c.apis[f.target].RestartWith("ORDERFLOW_FAILPOINTS=" + failpoint.CreateAfterStockTake + "=1*exit"); err != nil {
			in.out.Printf("api-kill-mid-create: %v", err)
		}
	case FaultGaleraKill, FaultRedisFailover, FaultDBCut:
		in.injectHA(ctx, f, wait)
	case FaultPaysimDown:
		// Alipay's gateway (in this process: it cannot be frozen) is
		// refused for the same time, whichever way the simulator goes.
		if c.ali != nil {
			c.ali.proxy.Cut()
		}
		if f.mode == faultSimFreeze {
			c.sim.Freeze()
			wait()
			c.sim.Thaw()
		} else {
			c.proxy.Cut()
			wait()
			_ = c.proxy.Restore()
		}
		if c.ali != nil {
			_ = c.ali.proxy.Restore()
		}
	}
	in.out.Printf("healed: %s", f.kind)
}

// rng draws a fault's own random choices from the run's seed and the fault.
func (in *injector) rng(f fault) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(in.seed), uint64(f.at)))
}

func (in *injector) counts() map[string]int {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := map[string]int{}
	for k, v := range in.injected {
		out[k] = v
	}
	return out
}
