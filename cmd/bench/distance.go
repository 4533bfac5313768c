package main

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// DistanceResult is the distance phase: the floor and the product again,
// in the same run, with MariaDB and Redis a fixed delay away instead of on
// loopback (issue 35). Beside it the report puts the same run's loopback
// figures.
type DistanceResult struct {
	RTTMs float64 `json:"rtt_ms"` // the round trip configured (-rtt)
	// Delay says which mechanism added it, and how: tc netem is not on
	// every kernel (not on the project's VM), the bench's proxies are.
	Delay  string       `json:"delay"`
	Probe  DelayProbe   `json:"probe_idle"`                        // the distance as measured before the load
	Loaded *DelayProbe  `json:"probe_under_closed_loop,omitempty"` // and while the product ran at it
	Floor  []FloorPoint `json:"floor"`
	// FloorBest is the best pool size at the distance; Ratio divides by it.
	FloorBest *FloorPoint `json:"floor_best,omitempty"`
	Closed    *LoadResult `json:"closed_loop,omitempty"`
	Ratio     float64     `json:"ratio_e2e_to_floor,omitempty"`
	// API and Workers are each process kind's round trips per order of the
	// closed loop (warm-up and drain included), counted by the proxies.
	API     RoundTrips `json:"api_round_trips_per_order"`
	Workers RoundTrips `json:"workers_round_trips_per_order"`
	// Resources is each process kind's CPU over the closed loop; the bench's
	// includes the delaying proxies.
	Resources []Resource `json:"resources,omitempty"`
}

// RoundTrips are round trips per order: SQL commands that wait for an
// answer, and Redis write bursts (a pipeline is one).
type RoundTrips struct {
	SQL   float64 `json:"sql"`
	Redis float64 `json:"redis"`
}

// probeRounds is how many SELECT 1 and PING rounds measure the distance
// before the load (each round a ping of each kind direct, through the bare
// hop and through the delay: ~0.3 s at 1 ms).
const probeRounds = 100

// phaseDistance runs the floor at phase 1's pool sizes and the product's
// closed loop with phase 2's parameters, both through delaying proxies in
// front of MariaDB and Redis.
func phaseDistance(ctx context.Context, e *benchEnv, r *Report, rig *floorRig, expected float64) error {
	p := e.params
	rtt := p.RTT.D()
	res := &DistanceResult{RTTMs: float64(rtt) / 1e6, Delay: "bench's own proxies, answers held " + msText(rtt) + " (the round trip on the way back)"}
	r.Distance = res
	logf("distance: MariaDB and Redis %s away (delay: %s)", msText(p.RTT.D()), res.Delay)
	probe, err := newRTTProbe(ctx, p, rtt)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	defer probe.close()
	if res.Probe, err = probe.rounds(ctx, probeRounds); err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	logf("distance: SELECT 1 direct %.3f ms, through the proxy %.3f ms, delayed %.3f ms (added %.3f ms)",
		res.Probe.SQL.DirectMs, res.Probe.SQL.HopMs, res.Probe.SQL.DelayedMs, res.Probe.SQL.AddedMs)
	if rig != nil {
		if err := distanceFloor(ctx, rig, res, rtt); err != nil {
			return err
		}
	}
	return distanceProduct(ctx, e, res, probe, rtt, expected)
}

// distanceFloor measures the floor's points through one delaying proxy.
func distanceFloor(ctx context.Context, rig *floorRig, res *DistanceResult, rtt time.Duration) error {
	mysqlAddr, err := mysqlHostPort(rig.server)
	if err != nil {
		return err
	}
	px, err := startProxy(mysqlAddr, serveMySQL, newRoundTripCounter(), rtt)
	if err != nil {
		return err
	}
	defer px.close()
	for _, conns := range rig.p.FloorConns {
		before := px.counts.snapshot().roundTrips
		pt, err := rig.pointVia(ctx, px.route(rig.server), conns)
		if err != nil {
			return fmt.Errorf("floor at a distance: %w", err)
		}
		if pt.all > 0 {
			pt.SQLRoundTrips = round2(float64(px.counts.snapshot().roundTrips-before) / float64(pt.all))
		}
		logf("distance: floor %d connections: %.0f orders/s, p50 %.1f ms, %.2f SQL round trips an order", conns, pt.OrdersPerS, pt.P50Ms, pt.SQLRoundTrips)
		res.Floor = append(res.Floor, pt)
	}
	for i := range res.Floor {
		if res.FloorBest == nil || res.Floor[i].OrdersPerS > res.FloorBest.OrdersPerS {
			res.FloorBest = &res.Floor[i]
		}
	}
	return nil
}

// distanceProduct runs the closed loop on a stack whose API and workers
// reach MariaDB and Redis through their own delaying proxies, timing the
// distance alongside.
func distanceProduct(ctx context.Context, e *benchEnv, res *DistanceResult, probe *rttProbe, rtt time.Duration, expected float64) error {
	p := e.params
	px, err := startProxies(p, newRoundTripCounter, rtt)
	if err != nil {
		return err
	}
	defer px.close()
	s, done, err := startWithSim(ctx, e, px.stackConfig("distance", e.dsn))
	if err != nil {
		return err
	}
	defer done()
	defer func() { _ = s.stop() }()
	need := int(1.2*expected*(p.Warmup.D()+p.Steady.D()).Seconds()) + 2000
	if err := ensureFixtures(ctx, e, s, need, false); err != nil {
		return err
	}
	quiesce(ctx, e.db, "the closed loop at a distance")
	if p.Profile != "" {
		defer captureProfiles(ctx, e, s, "distance", p.Profile, time.Now().Add(p.Warmup.D()), p.Steady.D())()
	}
	w := watchProduct(e, s)
	cpu0, b0, n0 := w.snapshot(), scrapeBatches(ctx, e, s), px.snapshot()
	stop, loaded := make(chan struct{}), make(chan DelayProbe, 1)
	go func() {
		lp, err := probe.every(ctx, 50*time.Millisecond, stop)
		if err != nil {
			logf("distance: probe under load: %v", err)
		}
		loaded <- lp
	}()
	box := machineWindow()
	c, err := runClosedLoop(ctx, e, e.client(s))
	close(stop)
	lp := <-loaded
	res.Loaded = &lp
	if err != nil {
		return fmt.Errorf("closed loop at a distance: %w", err)
	}
	c.Machine = box()
	cpu1, n1 := w.snapshot(), px.snapshot()
	c.Batches = batchSizes(b0, scrapeBatches(ctx, e, s))
	res.Closed = c
	if n := float64(c.Orders); n > 0 {
		per := func(a, b tally) float64 { return round2(float64(b.roundTrips-a.roundTrips) / n) }
		res.API = RoundTrips{SQL: per(n0.apiSQL, n1.apiSQL), Redis: per(n0.apiRedis, n1.apiRedis)}
		res.Workers = RoundTrips{SQL: per(n0.workerSQL, n1.workerSQL), Redis: per(n0.workerRedis, n1.workerRedis)}
		res.Resources = w.cpu(cpu0, cpu1, c.Orders)
	}
	if res.FloorBest != nil && res.FloorBest.OrdersPerS > 0 {
		res.Ratio = round2(c.OrdersPerS / res.FloorBest.OrdersPerS)
	}
	logf("distance: closed loop %.0f orders/s, paid→finished p50 %.1f ms p99 %.1f ms; ratio %.2f; SQL %.2f + %.2f, Redis %.2f + %.2f round trips an order (api + workers)",
		c.OrdersPerS, c.PaidToFinished.P50, c.PaidToFinished.P99, res.Ratio, res.API.SQL, res.Workers.SQL, res.API.Redis, res.Workers.Redis)
	return s.stop()
}

// msText renders a duration in milliseconds: "0.5 ms".
func msText(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/1e6, 'f', -1, 64) + " ms"
}
