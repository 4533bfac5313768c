package chaos

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"time"
)

// Fault kinds.
const (
	FaultWorkerKill  = "worker-kill9"  // kill -9 a worker, restart it
	FaultAPIKill     = "api-kill9"     // kill -9 an API process, restart it
	FaultRedisWipe   = "redis-wipe"    // kill -9 Redis, restart it empty
	FaultMariaDBKill = "mariadb-kill9" // kill -9 MariaDB, restart it on its data
	FaultPaysimDown  = "paysim-down"   // the provider unreachable (refused) or hung (SIGSTOP)
	// FaultRedisPartial deletes a random share of asynq's tasks and of the
	// stock counters and keeps the epoch marker: what a failover to a
	// lagging replica, a lost Cluster shard or an older RDB does.
	FaultRedisPartial = "redis-partial"
	// FaultMariaDBOutage keeps the database down longer than every task
	// type's retry budget in the chaos configuration, so tasks are archived
	// and only the sweep can bring their objects back.
	FaultMariaDBOutage = "mariadb-outage"
	// FaultWorkersAcrossSlot has every worker down across a reconciliation
	// slot: the first worker back must run the missed slot.
	FaultWorkersAcrossSlot = "workers-across-slot"
	// FaultAPIKillMidCreate restarts an API with a failpoint that exits
	// between an order's Redis stock take and its database commit.
	FaultAPIKillMidCreate = "api-kill-mid-create"
)

// paysim-down flavours.
const (
	faultSimCut    = "refused" // the proxy in front of it refuses connections
	faultSimFreeze = "hung"    // SIGSTOP: connections hang until the caller's timeout
)

// FaultKinds lists every kind in report order.
var FaultKinds = []string{FaultWorkerKill, FaultAPIKill, FaultRedisWipe, FaultMariaDBKill, FaultPaysimDown,
	FaultRedisPartial, FaultMariaDBOutage, FaultWorkersAcrossSlot, FaultAPIKillMidCreate}

// shortKinds are the kinds the fast tier's short run injects: the long
// outage and the wait for a reconciliation slot do not fit in its 40 s.
var shortKinds = []string{FaultWorkerKill, FaultAPIKill, FaultRedisWipe, FaultMariaDBKill, FaultPaysimDown,
	FaultRedisPartial, FaultAPIKillMidCreate}

// kindsFor is the kinds a run must inject.
func kindsFor(short, ha bool) []string {
	if ha {
		return HAKinds
	}
	if short {
		return shortKinds
	}
	return FaultKinds
}

// Budgets of the chaos configuration the outage must outlast (cluster.go's
// settings; the table's retry spans for them): order:close 10 retries from
// 100 ms doubling to 3.2 s ≈ 19 s, order:activate ≈ 3 s, group:settle 3.1 s,
// refund:execute 40 × ≤ 400 ms ≈ 16 s.
const outageDown = 24 * time.Second

// fault is one scheduled injection.
type fault struct {
	at     time.Duration // since the workload started
	kind   string
	target int           // which worker or API
	down   time.Duration // how long the thing stays down
	mode   string        // paysim-down: refused or hung
	share  float64       // redis-partial: the share of tasks and counters deleted
}

func (f fault) String() string {
	what := ""
	switch f.kind {
	case FaultWorkerKill:
		what = fmt.Sprintf("worker-%d", f.target+1)
		if f.target < 0 {
			what = "all-workers"
		}
	case FaultAPIKill, FaultAPIKillMidCreate:
		what = fmt.Sprintf("api-%d", f.target+1)
	case FaultRedisPartial:
		return fmt.Sprintf("%s %.0f%% of tasks and counters", f.kind, 100*f.share)
	case FaultPaysimDown:
		what = f.mode
	case FaultGaleraKill:
		what = fmt.Sprintf("node-%d", f.target+1)
	case FaultDBCut:
		what = "worker-1"
	case FaultRedisFailover:
		what = "replica lagging"
	}
	return fmt.Sprintf("%s %s down %s", f.kind, what, f.down.Round(100*time.Millisecond))
}

// schedule draws the faults of a run from the seed: every kind at least
// once, spread over the workload, worker kills repeatedly.
func schedule(seed int64, d time.Duration, short bool, workers, apis int) []fault {
	rng := rand.New(rand.NewPCG(uint64(seed), 0xc4a05))
	counts := map[string]int{FaultWorkerKill: 3, FaultAPIKill: 1, FaultRedisWipe: 1, FaultMariaDBKill: 1, FaultPaysimDown: 1,
		FaultRedisPartial: 1, FaultAPIKillMidCreate: 1}
	if !short {
		counts = map[string]int{FaultWorkerKill: max(6, int(d/(8*time.Second))), FaultAPIKill: 4, FaultRedisWipe: 3, FaultMariaDBKill: 3, FaultPaysimDown: 3,
			FaultRedisPartial: 3, FaultMariaDBOutage: 1, FaultWorkersAcrossSlot: 1, FaultAPIKillMidCreate: 3}
	}
	between := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rng.Int64N(int64(hi-lo)+1)) }
	var out []fault
	start, end := d/10, d*85/100
	for _, kind := range kindsFor(short, false) {
		n := counts[kind]
		slot := (end - start) / time.Duration(n)
		for i := range n {
			f := fault{kind: kind, at: start + time.Duration(i)*slot + between(0, slot*3/4)}
			switch kind {
			case FaultWorkerKill:
				f.target, f.down = rng.IntN(workers), between(200*time.Millisecond, 2*time.Second)
				if i%4 == 2 {
					f.target = -1 // the whole fleet at once: nothing runs until one is back
				}
			case FaultAPIKill:
				f.target, f.down = rng.IntN(apis), between(500*time.Millisecond, 3*time.Second)
			case FaultRedisWipe:
				f.down = between(500*time.Millisecond, 3*time.Second)
			case FaultMariaDBKill:
				f.down = between(1*time.Second, 5*time.Second)
			case FaultRedisPartial:
				f.share = 0.3 + 0.4*rng.Float64()
			case FaultMariaDBOutage:
				f.down = outageDown
				f.at = min(f.at, end-outageDown) // healed before the workload ends
			case FaultAPIKillMidCreate:
				f.target = rng.IntN(apis)
			case FaultPaysimDown:
				f.down = between(3*time.Second, 8*time.Second)
				f.mode = faultSimCut
				if i%2 == 1 || (n == 1 && rng.IntN(2) == 1) {
					f.mode = faultSimFreeze
				}
			}
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out
}
