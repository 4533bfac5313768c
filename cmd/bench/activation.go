package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// LoadResult is one end-to-end load phase: orders created through the API,
// paid by signed notifications and activated by the worker(s). Latencies
// come from the orders' own timestamps in the ledger.
type LoadResult struct {
	Orders            int       `json:"orders"`
	Seconds           float64   `json:"seconds"`
	OrdersPerS        float64   `json:"orders_per_s"`            // finished per second in the measured window
	OfferedPerS       float64   `json:"offered_per_s,omitempty"` // open loop: the arrival rate asked for
	PaidToFinished    Quantiles `json:"paid_to_finished"`
	PaidToClaimed     Quantiles `json:"paid_to_claimed"`     // relay + queue wait + asynq pickup
	ClaimedToFinished Quantiles `json:"claimed_to_finished"` // deliver + finalize
	DrainSeconds      float64   `json:"drain_s"`             // after the last payment, until all finished
	Create            Quantiles `json:"create_request"`      // client side: POST /api/v1/orders
	Pay               Quantiles `json:"pay_request"`         // client side: the payment notification
	Locks             LockWaits `json:"locks"`               // server-wide, whole phase
	// MovePlans counts, per move, which index EXPLAIN picked for the
	// product's `UPDATE orders … WHERE id = ? AND status = ?` at moments
	// during the load (the plan depends on how many orders sit in the status).
	MovePlans    map[string]map[string]int `json:"move_plans_under_load,omitempty"`
	ClientErrors int64                     `json:"client_errors"`
	FirstError   string                    `json:"first_error,omitempty"`
	LateArrivals int64                     `json:"late_arrivals,omitempty"` // open loop: arrivals that found no free slot
	// Batches is how the workers batched the phase's activations (null
	// while they export no orderflow_activation_batch_size histogram).
	Batches *BatchSizes `json:"batch_sizes"`
	// Machine is the whole box's CPU over the phase (steal included).
	Machine *MachineCPU `json:"machine_cpu,omitempty"`
}

// backlogGauge follows how many activations are queued or running
// (asynq's critical queue: pending + active), for the closed loop's gate.
// It reads every 20 ms: at a few hundred orders a second the gate is off by
// a few orders at most, and each read is a Redis round trip taken from the
// stack under test (every 5 ms cost a tenth of the bench's own CPU).
type backlogGauge struct {
	n    atomic.Int64
	stop chan struct{}
	done chan struct{}
}

func watchBacklog(rdb *redis.Client) *backlogGauge {
	g := &backlogGauge{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(g.done)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		ctx := context.Background()
		for {
			pipe := rdb.Pipeline()
			p := pipe.LLen(ctx, "asynq:{critical}:pending")
			a := pipe.LLen(ctx, "asynq:{critical}:active")
			if _, err := pipe.Exec(ctx); err == nil {
				g.n.Store(p.Val() + a.Val())
			}
			select {
			case <-g.stop:
				return
			case <-t.C:
			}
		}
	}()
	return g
}

func (g *backlogGauge) close() { close(g.stop); <-g.done }

// errorLog keeps a count and the first error of a load phase.
type errorLog struct {
	n     atomic.Int64
	mu    sync.Mutex
	first string
}

func (l *errorLog) add(err error) {
	if l.n.Add(1) == 1 {
		l.mu.Lock()
		l.first = err.Error()
		l.mu.Unlock()
	}
}

// requestTimes collects client-side request latencies.
type requestTimes struct {
	mu          sync.Mutex
	create, pay []time.Duration
}

func (r *requestTimes) add(create, pay time.Duration) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.create, r.pay = append(r.create, create), append(r.pay, pay)
	r.mu.Unlock()
}

// orderOnce is one buyer's order: create, then pay.
func orderOnce(ctx context.Context, c *apiClient, fx *fixtures, token string, times *requestTimes) error {
	t0 := time.Now()
	o, err := c.createOrder(ctx, token, fx.product())
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	t1 := time.Now()
	if err := c.pay(ctx, o); err != nil {
		return fmt.Errorf("pay %s: %w", o.OrderNo, err)
	}
	times.add(t1.Sub(t0), time.Since(t1))
	return nil
}

// runClosedLoop drives the stack with `clients` buyers, each creating and
// paying one order after another, while at most `backlog` activations wait
// or run; the rate of finished orders in the window after the warm-up is the
// steady-state maximum.
func runClosedLoop(ctx context.Context, e *benchEnv, c *apiClient) (*LoadResult, error) {
	p := e.params
	idBefore, err := queryInt(ctx, e.db, `SELECT COALESCE(MAX(id), 0) FROM orders`)
	if err != nil {
		return nil, err
	}
	gauge := watchBacklog(e.rdb)
	defer gauge.close()
	locks0 := readRowLocks(ctx, e.db)
	var times requestTimes
	t0 := time.Now()
	from, to := t0.Add(p.Warmup.D()), t0.Add(p.Warmup.D()+p.Steady.D())
	plans := make(chan map[string]map[string]int, 1)
	go func() { plans <- sampleMovePlans(ctx, e.db, from, to, 10) }()
	var (
		errs errorLog
		wg   sync.WaitGroup
	)
	for i := 0; i < p.Clients; i++ {
		token := e.fx.tokens[i%len(e.fx.tokens)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(to) && ctx.Err() == nil && errs.n.Load() < 50 {
				if gauge.n.Load() >= int64(p.Backlog) {
					time.Sleep(2 * time.Millisecond)
					continue
				}
				if err := orderOnce(ctx, c, e.fx, token, &times); err != nil {
					errs.add(err)
					time.Sleep(10 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	lastPay := time.Now()
	if err := waitFinished(ctx, e.db, idBefore, p.Drain.D()); err != nil {
		return nil, err
	}
	res := &LoadResult{Seconds: p.Steady.D().Seconds(), ClientErrors: errs.n.Load(), FirstError: errs.first,
		DrainSeconds: round2(time.Since(lastPay).Seconds()), Create: percentiles(times.create), Pay: percentiles(times.pay)}
	if res.Orders, err = countOrders(ctx, e.db, idBefore); err != nil {
		return nil, err
	}
	res.Locks = lockWaits(locks0, readRowLocks(ctx, e.db), res.Orders)
	done, err := queryInt(ctx, e.db, `SELECT COUNT(*) FROM orders WHERE id > ? AND finished_at >= ? AND finished_at < ?`, idBefore, ms(from), ms(to))
	if err != nil {
		return nil, err
	}
	res.OrdersPerS = round1(float64(done) / p.Steady.D().Seconds())
	res.MovePlans = <-plans
	err = orderLatencies(ctx, e.db, res, `id > ? AND paid_at >= ? AND paid_at < ?`, idBefore, ms(from), ms(to))
	return res, err
}

// runOpenLoop offers orders at a fixed arrival rate, whatever the system
// answers (each arrival is its own goroutine), for d.
func runOpenLoop(ctx context.Context, e *benchEnv, c *apiClient, rate float64, d time.Duration) (*LoadResult, error) {
	idBefore, err := queryInt(ctx, e.db, `SELECT COALESCE(MAX(id), 0) FROM orders`)
	if err != nil {
		return nil, err
	}
	const maxInFlight = 2000
	var (
		errs     errorLog
		wg       sync.WaitGroup
		late     atomic.Int64
		inFlight = make(chan struct{}, maxInFlight)
	)
	interval := time.Duration(float64(time.Second) / rate)
	locks0 := readRowLocks(ctx, e.db)
	var times requestTimes
	t0 := time.Now()
	plans := make(chan map[string]map[string]int, 1)
	go func() { plans <- sampleMovePlans(ctx, e.db, t0.Add(d/10), t0.Add(d), 10) }()
	for i := 0; ctx.Err() == nil; i++ {
		due := t0.Add(time.Duration(i) * interval)
		if due.Sub(t0) >= d {
			break
		}
		time.Sleep(time.Until(due))
		select {
		case inFlight <- struct{}{}:
		default:
			late.Add(1)
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-inFlight; wg.Done() }()
			if err := orderOnce(ctx, c, e.fx, e.fx.buyer(), &times); err != nil {
				errs.add(err)
			}
		}()
	}
	wg.Wait()
	lastPay := time.Now()
	if err := waitFinished(ctx, e.db, idBefore, e.params.Drain.D()); err != nil {
		return nil, err
	}
	res := &LoadResult{Seconds: d.Seconds(), OfferedPerS: round1(rate), ClientErrors: errs.n.Load(), FirstError: errs.first,
		LateArrivals: late.Load(), DrainSeconds: round2(time.Since(lastPay).Seconds()), Create: percentiles(times.create), Pay: percentiles(times.pay)}
	if res.Orders, err = countOrders(ctx, e.db, idBefore); err != nil {
		return nil, err
	}
	res.Locks = lockWaits(locks0, readRowLocks(ctx, e.db), res.Orders)
	res.OrdersPerS = round1(float64(res.Orders) / d.Seconds())
	res.MovePlans = <-plans
	err = orderLatencies(ctx, e.db, res, `id > ?`, idBefore)
	return res, err
}

func countOrders(ctx context.Context, db *sql.DB, idBefore int64) (int, error) {
	n, err := queryInt(ctx, db, `SELECT COUNT(*) FROM orders WHERE id > ?`, idBefore)
	return int(n), err
}

// waitFinished waits until no order after idBefore is pending, paid or
// claimed (the index on status keeps the poll cheap).
func waitFinished(ctx context.Context, db *sql.DB, idBefore int64, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		n, err := queryInt(ctx, db, `SELECT COUNT(*) FROM orders WHERE status IN (1, 2, 6) AND id > ?`, idBefore)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d orders still not finished %s after the last payment", n, within)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// orderLatencies fills the paid→finished, paid→claimed and claimed→finished
// quantiles of the finished orders matching where.
func orderLatencies(ctx context.Context, db *sql.DB, res *LoadResult, where string, args ...any) error {
	rows, err := db.QueryContext(ctx, `SELECT paid_at, claimed_at, finished_at FROM orders WHERE status = 5 AND `+where, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var pf, pc, cf []time.Duration
	for rows.Next() {
		var paid, claimed, finished sql.NullTime
		if err := rows.Scan(&paid, &claimed, &finished); err != nil {
			return err
		}
		if !paid.Valid || !finished.Valid {
			return errors.New("a finished order has no paid_at or finished_at")
		}
		pf = append(pf, finished.Time.Sub(paid.Time))
		if claimed.Valid {
			pc = append(pc, claimed.Time.Sub(paid.Time))
			cf = append(cf, finished.Time.Sub(claimed.Time))
		}
	}
	res.PaidToFinished, res.PaidToClaimed, res.ClaimedToFinished = percentiles(pf), percentiles(pc), percentiles(cf)
	return rows.Err()
}
