package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// CensusResult counts, per order, what each process sends to MariaDB and
// Redis, measured through counting proxies on a separate start of the stack
// (the proxies add a hop, so no timing is taken from this phase).
type CensusResult struct {
	Orders      int     `json:"orders"`
	Seconds     float64 `json:"seconds"`
	IdleSeconds float64 `json:"idle_seconds"`
	WorkerCount int     `json:"worker_processes"`
	// IdleRedisPerWorker is the workers' idle Redis round trips per second ÷ their number.
	IdleRedisPerWorker float64    `json:"idle_redis_round_trips_per_s_per_worker"`
	API                CensusSide `json:"api"`
	Workers            CensusSide `json:"workers"`
}

// CensusSide is one process kind's traffic.
type CensusSide struct {
	SQLRoundTrips   float64     `json:"sql_round_trips_per_order"`
	Transactions    float64     `json:"transactions_per_order"`
	RedisCommands   float64     `json:"redis_commands_per_order"`
	RedisRoundTrips float64     `json:"redis_round_trips_per_order"`
	IdleSQLPerS     float64     `json:"idle_sql_round_trips_per_s"`
	IdleRedisPerS   float64     `json:"idle_redis_round_trips_per_s"`
	Statements      []NameCount `json:"statements"`     // per order, most frequent first
	RedisByCommand  []NameCount `json:"redis_commands"` // per order
}

// NameCount is one statement or command shape and how often it ran per order.
type NameCount struct {
	Name     string  `json:"name"`
	PerOrder float64 `json:"per_order"`
}

func runCensus(ctx context.Context, e *benchEnv) (*CensusResult, error) {
	px, err := startProxies(e.params, newCounter, 0)
	if err != nil {
		return nil, err
	}
	defer px.close()
	st, done, err := startWithSim(ctx, e, px.stackConfig("census", e.dsn))
	if err != nil {
		return nil, err
	}
	defer done()
	c := e.client(st)
	// Idle: what the processes send with nothing to do (polling, heartbeats),
	// once their start-up work (the start-up reconciliation, the scheduler's
	// registration) is done: a window 1 s after the start caught it now and
	// then (34.5 Redis calls/s one run, 8–9 the others).
	time.Sleep(3 * time.Second)
	idle0, t0 := px.snapshot(), time.Now()
	time.Sleep(3 * time.Second)
	idle1, idleSecs := px.snapshot(), time.Since(t0).Seconds()
	// Warm the pools and prepared-statement caches, then count.
	if err := censusOrders(ctx, e, c, 40); err != nil {
		_ = st.stop()
		return nil, err
	}
	a, t1 := px.snapshot(), time.Now()
	if err := censusOrders(ctx, e, c, e.params.Census); err != nil {
		_ = st.stop()
		return nil, err
	}
	b, secs := px.snapshot(), time.Since(t1).Seconds()
	if err := st.stop(); err != nil {
		return nil, err
	}
	n := float64(e.params.Census)
	res := &CensusResult{Orders: e.params.Census, Seconds: round2(secs), IdleSeconds: round2(idleSecs), WorkerCount: len(st.workers)}
	res.API = censusSide(b.apiSQL.minus(a.apiSQL), b.apiRedis.minus(a.apiRedis), idle1.apiSQL.minus(idle0.apiSQL), idle1.apiRedis.minus(idle0.apiRedis), n, idleSecs)
	res.Workers = censusSide(b.workerSQL.minus(a.workerSQL), b.workerRedis.minus(a.workerRedis), idle1.workerSQL.minus(idle0.workerSQL), idle1.workerRedis.minus(idle0.workerRedis), n, idleSecs)
	if res.WorkerCount > 0 {
		res.IdleRedisPerWorker = round1(res.Workers.IdleRedisPerS / float64(res.WorkerCount))
	}
	return res, nil
}

// censusOrders runs n orders with 8 clients and waits until all finished.
func censusOrders(ctx context.Context, e *benchEnv, c *apiClient, n int) error {
	idBefore, err := queryInt(ctx, e.db, `SELECT COALESCE(MAX(id), 0) FROM orders`)
	if err != nil {
		return err
	}
	if err := parallel(ctx, n, 8, func(ctx context.Context, _ int) error {
		return orderOnce(ctx, c, e.fx, e.fx.buyer(), nil)
	}); err != nil {
		return err
	}
	return waitFinished(ctx, e.db, idBefore, e.params.Drain.D())
}

func censusSide(sqlT, redisT, idleSQL, idleRedis tally, n, idleSecs float64) CensusSide {
	s := CensusSide{
		SQLRoundTrips:   round2(float64(sqlT.roundTrips) / n),
		RedisRoundTrips: round2(float64(redisT.roundTrips) / n),
		IdleSQLPerS:     round1(float64(idleSQL.roundTrips) / idleSecs),
		IdleRedisPerS:   round1(float64(idleRedis.roundTrips) / idleSecs),
	}
	var redisCmds int64
	for _, v := range redisT.byName {
		redisCmds += v
	}
	s.RedisCommands = round2(float64(redisCmds) / n)
	for k, v := range sqlT.byName {
		// The product starts a transaction with its first statement's round
		// trip, or inside a compound statement (BEGIN NOT ATOMIC …).
		if q := strings.TrimPrefix(strings.TrimPrefix(k, "query   "), "BEGIN NOT ATOMIC "); strings.HasPrefix(q, "START TRANSACTION") || q == "BEGIN" {
			s.Transactions += float64(v)
		}
	}
	s.Transactions = round2(s.Transactions / n)
	s.Statements = perOrder(sqlT.byName, n)
	s.RedisByCommand = perOrder(redisT.byName, n)
	return s
}

// perOrder lists what ran at least once per 100 orders; the rest is summed
// into one "(other …)" entry.
func perOrder(m map[string]int64, n float64) []NameCount {
	out := make([]NameCount, 0, len(m))
	var rest int64
	var restKinds int
	for k, v := range m {
		if float64(v)/n < 0.01 {
			rest += v
			restKinds++
			continue
		}
		out = append(out, NameCount{Name: k, PerOrder: round2(float64(v) / n)})
	}
	if rest > 0 {
		out = append(out, NameCount{Name: fmt.Sprintf("(other: %d kinds, each < 0.01 per order)", restKinds), PerOrder: round2(float64(rest) / n)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].PerOrder != out[j].PerOrder {
			return out[i].PerOrder > out[j].PerOrder
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// mysqlHostPort is the server address of the -mysql DSN.
func mysqlHostPort(server string) (string, error) {
	i, j := strings.Index(server, "tcp("), strings.Index(server, ")/")
	if i < 0 || j < i {
		return "", fmt.Errorf("-mysql: the census needs a tcp(host:port) address, got %q", server)
	}
	return server[i+4 : j], nil
}

// print writes the census's table: round trips per order and per idle
// second, then the statements and commands behind them.
func (c *CensusResult) print(w io.Writer) {
	fmt.Fprintf(w, "\nround trips per order (census: %d orders through counting proxies; floor: %d SQL round trips, %d transactions)\n", c.Orders, floorRoundTrips, floorTransactions)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "process\tSQL round trips\ttransactions\tRedis commands\tRedis round trips\tidle SQL/s\tidle Redis/s")
	for _, s := range []struct {
		n string
		s CensusSide
	}{{"api", c.API}, {"worker(s)", c.Workers}} {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.1f\t%.1f\n", s.n, s.s.SQLRoundTrips, s.s.Transactions, s.s.RedisCommands, s.s.RedisRoundTrips, s.s.IdleSQLPerS, s.s.IdleRedisPerS)
	}
	fmt.Fprintf(tw, "total\t%.2f\t%.2f\t%.2f\t%.2f\t\t\n", c.API.SQLRoundTrips+c.Workers.SQLRoundTrips, c.API.Transactions+c.Workers.Transactions,
		c.API.RedisCommands+c.Workers.RedisCommands, c.API.RedisRoundTrips+c.Workers.RedisRoundTrips)
	tw.Flush()
	if c.WorkerCount > 0 {
		fmt.Fprintf(w, "idle per worker (the worker(s) row ÷ %d workers): %.1f SQL/s, %.1f Redis/s\n", c.WorkerCount,
			c.Workers.IdleSQLPerS/float64(c.WorkerCount), c.Workers.IdleRedisPerS/float64(c.WorkerCount))
	}
	for _, s := range []struct {
		n string
		s CensusSide
	}{{"api", c.API}, {"worker(s)", c.Workers}} {
		fmt.Fprintf(w, "  %s statements per order:\n", s.n)
		for _, st := range s.s.Statements {
			if st.PerOrder >= 0.05 {
				fmt.Fprintf(w, "    %5.2f  %s\n", st.PerOrder, st.Name)
			}
		}
		fmt.Fprintf(w, "  %s Redis commands per order:\n", s.n)
		for _, st := range s.s.RedisByCommand {
			if st.PerOrder >= 0.05 {
				fmt.Fprintf(w, "    %5.2f  %s\n", st.PerOrder, st.Name)
			}
		}
	}
}
