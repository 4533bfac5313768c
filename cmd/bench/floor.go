package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// FloorPoint is the raw floor at one pool size: what this machine's MariaDB
// does with one order's ledger work and nothing else — no HTTP, no queue, no
// ORM, no events, no cache.
type FloorPoint struct {
	Conns      int       `json:"conns"`
	Orders     int       `json:"orders"`
	Seconds    float64   `json:"seconds"`
	OrdersPerS float64   `json:"orders_per_s"`
	P50Ms      float64   `json:"p50_ms"`
	P99Ms      float64   `json:"p99_ms"`
	Retries    int64     `json:"deadlock_retries"`
	Locks      LockWaits `json:"locks"` // server-wide, whole point
	// CPU milliseconds per order of MariaDB (shared: includes other
	// clients) and of the bench process doing the SQL.
	MariaDBCPUms float64     `json:"mariadb_cpu_ms_per_order"`
	BenchCPUms   float64     `json:"bench_cpu_ms_per_order"`
	Machine      *MachineCPU `json:"machine_cpu,omitempty"`
	// SQLRoundTrips is counted through the distance phase's proxy (its
	// points only; on loopback it is floorRoundTrips by construction).
	SQLRoundTrips float64 `json:"sql_round_trips_per_order,omitempty"`
	all           int     // orders run, the warm-up's included
}

// floorRoundTrips is what one floor order costs: 4 × (START TRANSACTION +
// statements + COMMIT) = 5 + 4 + 3 + 4.
const floorRoundTrips, floorTransactions = 16, 4

// floorFixtures seeds the floor database: n card products, one buyer.
func floorFixtures(ctx context.Context, db *sql.DB, n int) (productIDs []int64, userID int64, err error) {
	now := ms(time.Now())
	for i := range n {
		res, err := db.ExecContext(ctx, `INSERT INTO products (sku, kind, price_cents, created_at) VALUES (?, 'card', 990, ?)`, fmt.Sprintf("floor-card-%d", i), now)
		if err != nil {
			return nil, 0, err
		}
		id, _ := res.LastInsertId()
		productIDs = append(productIDs, id)
	}
	res, err := db.ExecContext(ctx, `INSERT INTO users (name, token_hash, created_at) VALUES ('floor', REPEAT('0', 64), ?)`, now)
	if err != nil {
		return nil, 0, err
	}
	userID, _ = res.LastInsertId()
	return productIDs, userID, nil
}

// roundRobin hands out products in turn.
type roundRobin struct {
	ids  []int64
	next atomic.Int64
}

func (r *roundRobin) pick() int64 { return r.ids[int(r.next.Add(1))%len(r.ids)] }

// seedKeys adds n UNSOLD keys to a product with multi-row INSERTs.
func seedKeys(ctx context.Context, db *sql.DB, productID int64, prefix string, n int) error {
	now := ms(time.Now())
	err := insertMany(ctx, db, `INSERT INTO card_keys (product_id, code, status, updated_at) VALUES `, "(?, ?, 'UNSOLD', ?)",
		n, 1000, func(i int) []any { return []any{productID, fmt.Sprintf("%s-%d", prefix, i), now} })
	if err != nil {
		return fmt.Errorf("seed keys: %w", err)
	}
	return nil
}

// insertMany writes n rows with multi-row INSERTs of at most batch rows:
// head is the statement up to VALUES, tuple one row's placeholders, row(i)
// the i-th row's values.
func insertMany(ctx context.Context, db *sql.DB, head, tuple string, n, batch int, row func(i int) []any) error {
	for i := 0; i < n; i += batch {
		m := min(batch, n-i)
		var b strings.Builder
		b.WriteString(head)
		var args []any
		for j := range m {
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString(tuple)
			args = append(args, row(i+j)...)
		}
		if _, err := db.ExecContext(ctx, b.String(), args...); err != nil {
			return err
		}
	}
	return nil
}

// floorRig is the floor database, seeded, ready to measure a point.
type floorRig struct {
	p          Params
	server     string
	dbName     string
	admin      *sql.DB
	products   *roundRobin
	userID     int64
	mariadbPID int
	points     int
}

func newFloorRig(ctx context.Context, p Params, server, dbName string) (*floorRig, error) {
	admin, err := openLedger(ctx, server, dbName, 4)
	if err != nil {
		return nil, err
	}
	r := &floorRig{p: p, server: server, dbName: dbName, admin: admin}
	if addr, err := mysqlHostPort(server); err == nil {
		r.mariadbPID = pidListening(portOf(addr))
	}
	productIDs, userID, err := floorFixtures(ctx, admin, p.Products)
	if err != nil {
		admin.Close()
		return nil, fmt.Errorf("floor fixtures: %w", err)
	}
	r.products, r.userID = &roundRobin{ids: productIDs}, userID
	return r, nil
}

func (r *floorRig) close() { r.admin.Close() }

// point seeds keys for one point and measures it.
func (r *floorRig) point(ctx context.Context, conns int) (FloorPoint, error) {
	return r.pointVia(ctx, r.server, conns)
}

// pointVia is a point measured on a pool to server (the distance phase: a
// proxy in front of the rig's own); the keys are seeded direct.
func (r *floorRig) pointVia(ctx context.Context, server string, conns int) (FloorPoint, error) {
	r.points++
	// Generous: 4,000 orders/s for the whole point, so keys never run out.
	keys := int((r.p.FloorWarmup.D()+r.p.FloorTime.D()).Seconds()*4000)/len(r.products.ids) + 1000
	for _, pid := range r.products.ids {
		if err := seedKeys(ctx, r.admin, pid, fmt.Sprintf("FLOOR%d-%d", r.points, pid), keys); err != nil {
			return FloorPoint{}, err
		}
	}
	quiesce(ctx, r.admin, fmt.Sprintf("the floor at %d connections", conns))
	pt, err := floorPoint(ctx, server, r.dbName, conns, r.products, r.userID, r.p.FloorWarmup.D(), r.p.FloorTime.D(), r.mariadbPID)
	if err != nil {
		return pt, fmt.Errorf("floor at %d connections: %w", conns, err)
	}
	return pt, nil
}

// run measures each pool size in turn.
func (r *floorRig) run(ctx context.Context, log func(string, ...any)) ([]FloorPoint, error) {
	var out []FloorPoint
	for _, conns := range r.p.FloorConns {
		pt, err := r.point(ctx, conns)
		if err != nil {
			return out, err
		}
		log("floor: %d connections: %.0f orders/s, p50 %.1f ms", conns, pt.OrdersPerS, pt.P50Ms)
		out = append(out, pt)
	}
	return out, nil
}

// floorPoint runs `conns` workers on a pool of `conns` connections, each
// doing one order after another, and counts the orders that completed in the
// measured window.
func floorPoint(ctx context.Context, server, dbName string, conns int, products *roundRobin, userID int64, warmup, measure time.Duration, mariadbPID int) (FloorPoint, error) {
	db, err := openLedger(ctx, server, dbName, conns)
	if err != nil {
		return FloorPoint{}, err
	}
	defer db.Close()
	locks0 := readRowLocks(ctx, db)
	w := watched{"mariadbd": {mariadbPID}, "bench": {os.Getpid()}}
	cpu0 := w.snapshot()
	box := machineWindow()
	var total atomic.Int64
	start := time.Now()
	from, to := start.Add(warmup), start.Add(warmup+measure)
	var (
		mu       sync.Mutex
		lat      []time.Duration
		retries  atomic.Int64
		firstErr error
		wg       sync.WaitGroup
	)
	for w := 0; w < conns; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for {
				t0 := time.Now()
				if !t0.Before(to) || ctx.Err() != nil {
					break
				}
				if err := floorOrder(ctx, db, products.pick(), userID, &retries); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				total.Add(1)
				if t1 := time.Now(); !t0.Before(from) && !t1.After(to) {
					mine = append(mine, t1.Sub(t0))
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return FloorPoint{}, firstErr
	}
	cpu1 := w.snapshot()
	machine := box()
	n := float64(max(total.Load(), 1))
	q := percentiles(lat)
	return FloorPoint{
		MariaDBCPUms: round2(w.used("mariadbd", cpu0, cpu1) * 1000 / n),
		BenchCPUms:   round2(w.used("bench", cpu0, cpu1) * 1000 / n),
		Conns:        conns, Orders: len(lat), Seconds: measure.Seconds(),
		OrdersPerS: float64(len(lat)) / measure.Seconds(),
		P50Ms:      q.P50, P99Ms: q.P99, Retries: retries.Load(),
		Locks:   lockWaits(locks0, readRowLocks(ctx, db), int(total.Load())),
		Machine: machine, all: int(total.Load()),
	}, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
