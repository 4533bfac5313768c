package main

import (
	"context"
	"fmt"
	"os"
	"time"
)

// productCPUTotal names the sum of the product's processes' CPU.
const productCPUTotal = "api + queue + mariadbd + redis"

// phaseE2E is phase 2 and the resource accounting of phase 5.
func phaseE2E(ctx context.Context, e *benchEnv, r *Report, expected float64) error {
	p := e.params
	logf("phase 2: end to end with %d worker(s)", p.Workers)
	s, done, err := startWithSim(ctx, e, stackConfig{label: "e2e", mysqlDSN: e.dsn, redisAddr: p.RedisAddr})
	if err != nil {
		return err
	}
	defer done()
	defer func() { _ = s.stop() }()
	// Keys for the closed loop at up to 1.2× the floor, the half load, and margin.
	need := int(1.2*expected*(p.Warmup.D()+p.Steady.D()).Seconds()+0.6*expected*p.HalfTime.D().Seconds()) + 2000
	t := time.Now()
	if err := ensureFixtures(ctx, e, s, need, false); err != nil {
		return err
	}
	logf("fixtures ready in %.1fs (%d keys)", time.Since(t).Seconds(), e.fx.keys)
	quiesce(ctx, e.db, "the closed loop")
	c := e.client(s)
	w := watchProduct(e, s)
	cpu0 := w.snapshot()
	r.E2E = &E2EReport{Workers: p.Workers, Pay: p.Pay}
	if p.Profile != "" {
		wait := captureProfiles(ctx, e, s, "e2e", p.Profile, time.Now().Add(p.Warmup.D()), p.Steady.D())
		defer wait()
	}
	b0 := scrapeBatches(ctx, e, s)
	box := machineWindow()
	if r.E2E.Closed, err = runClosedLoop(ctx, e, c); err != nil {
		return fmt.Errorf("closed loop: %w", err)
	}
	r.E2E.Closed.Machine = box()
	b1 := scrapeBatches(ctx, e, s)
	r.E2E.Closed.Batches = batchSizes(b0, b1)
	logf("closed loop: %.0f orders/s, paid→finished p50 %.1f ms p99 %.1f ms", r.E2E.Closed.OrdersPerS, r.E2E.Closed.PaidToFinished.P50, r.E2E.Closed.PaidToFinished.P99)
	orders := r.E2E.Closed.Orders
	if r.E2E.Closed.OrdersPerS > 0 && p.HalfTime > 0 {
		rate := r.E2E.Closed.OrdersPerS / 2
		logf("half load: open loop at %.0f orders/s for %s", rate, p.HalfTime.D())
		box := machineWindow()
		if r.E2E.Half, err = runOpenLoop(ctx, e, c, rate, p.HalfTime.D()); err != nil {
			return fmt.Errorf("half load: %w", err)
		}
		r.E2E.Half.Machine = box()
		r.E2E.Half.Batches = batchSizes(b1, scrapeBatches(ctx, e, s))
		orders += r.E2E.Half.Orders
		logf("half load: p50 %.1f ms p99 %.1f ms", r.E2E.Half.PaidToFinished.P50, r.E2E.Half.PaidToFinished.P99)
	}
	cpu1 := w.snapshot()
	for _, res := range w.cpu(cpu0, cpu1, orders) {
		pids := w[res.Process]
		switch res.Process {
		case "api", "queue":
			for _, pid := range pids {
				if rss, err := peakRSSMB(pid); err == nil {
					res.PeakRSSMB = max(res.PeakRSSMB, round1(rss))
				}
			}
			if res.Process == "queue" && len(pids) > 1 {
				res.Note = fmt.Sprintf("%d processes, CPU summed, RSS the largest", len(pids))
			}
		case "bench":
			res.Note = "the load generator itself"
		default:
			res.Note = "shared server: includes other clients"
		}
		r.Resources = append(r.Resources, res)
	}
	var total Resource
	for _, res := range r.Resources {
		if res.Process != "bench" {
			total.CPUSeconds += res.CPUSeconds
			total.CPUPer1k += res.CPUPer1k
		}
	}
	r.Resources = append(r.Resources, Resource{Process: productCPUTotal, CPUSeconds: round2(total.CPUSeconds), CPUPer1k: round2(total.CPUPer1k),
		Note: "compare the floor's MariaDB + bench CPU per order"})
	return s.stop()
}

// productProcesses are the process kinds watchProduct follows, in the
// report's order.
var productProcesses = []string{"api", "queue", "bench", "mariadbd", "redis-server"}

// watchProduct follows a stack's processes, the bench and the shared
// MariaDB and Redis servers (where their pids can be found).
func watchProduct(e *benchEnv, s *stack) watched {
	w := watched{"api": {s.api.Pid()}, "bench": {os.Getpid()}}
	if addr, err := mysqlHostPort(e.params.MySQL); err == nil {
		if pid := pidListening(portOf(addr)); pid > 0 {
			w["mariadbd"] = []int{pid}
		}
	}
	if pid := pidListening(portOf(e.params.RedisAddr)); pid > 0 {
		w["redis-server"] = []int{pid}
	}
	for _, wk := range s.workers {
		w["queue"] = append(w["queue"], wk.Pid())
	}
	return w
}
