package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"orderflow/internal/audit"

	"github.com/redis/go-redis/v9"
)

// takeovers measures, for every worker kill, the time from the kill until
// every order the killed worker held is done by another process: the
// orders it had claimed (orders.claimed_by names it) and those of the
// activate and close tasks asynq lists it running (its asynq:workers hash,
// which outlives the process by a heartbeat or two). "Done" is any status a
// worker moves an order to from there (finished, closed, failed,
// refunding, refunded). A kill that held nothing is counted apart, and so
// is one whose wait overlapped the ledger's own outage (nobody finishes an
// order while the database is down: that wait measures the outage).
type takeovers struct {
	mu      sync.Mutex
	times   []time.Duration // one per kill that held orders, the ledger up throughout
	orders  int             // orders held, over those kills
	slowest string          // the kill behind the max, and its last order
	// downs are the ledger's outages; overlapped the waits that crossed one.
	downs      [][2]time.Time
	overlapped []time.Duration
	empty      int      // kills that held nothing
	unknown    []string // kills whose held orders could not be read
	pending    []string // kills whose orders were not all done in the bound
	wg         sync.WaitGroup
}

// takeoverBound is how long a kill's orders are watched.
const takeoverBound = 2 * time.Minute

// killed reads what the process with pid held, right after its kill -9, and
// watches those orders in the background.
func (tk *takeovers) killed(ctx context.Context, dsn string, rdb redis.UniversalClient, name string, pid int, at time.Time) {
	db, err := audit.Open(dsn)
	if err != nil {
		tk.note(&tk.unknown, fmt.Sprintf("%s: %v", name, err))
		return
	}
	nos, err := heldBy(ctx, db, rdb, pid)
	if err != nil {
		db.Close()
		tk.note(&tk.unknown, fmt.Sprintf("%s: %v", name, err))
		return
	}
	if len(nos) == 0 {
		db.Close()
		tk.mu.Lock()
		tk.empty++
		tk.mu.Unlock()
		return
	}
	tk.wg.Add(1)
	go func() {
		defer tk.wg.Done()
		defer db.Close()
		left, last := nos, nos[0]
		for time.Since(at) < takeoverBound && ctx.Err() == nil {
			if left = notDone(ctx, db, left); len(left) == 0 {
				tk.done(name, last, len(nos), at, time.Now())
				return
			}
			last = left[0]
			time.Sleep(100 * time.Millisecond)
		}
		tk.note(&tk.pending, fmt.Sprintf("%s: %d of %d orders not done after %s, e.g. %s", name, len(left), len(nos), takeoverBound, left[0]))
	}()
}

// done records one kill's wait for its n orders, from at to end.
func (tk *takeovers) done(name, last string, n int, at, end time.Time) {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	took := end.Sub(at)
	for _, d := range tk.downs {
		if d[0].Before(end) && d[1].After(at) {
			tk.overlapped = append(tk.overlapped, took)
			return
		}
	}
	if len(tk.times) == 0 || took > slices.Max(tk.times) {
		tk.slowest = fmt.Sprintf("%s killed at %s, last order %s", name, at.Format("15:04:05.000"), last)
	}
	tk.times = append(tk.times, took)
	tk.orders += n
}

// ledgerDown records an outage of the database, from from to to. A wait
// still running is classified when it ends, so an outage must be recorded
// when it ends — before any wait that crossed it can finish.
func (tk *takeovers) ledgerDown(from, to time.Time) {
	tk.mu.Lock()
	tk.downs = append(tk.downs, [2]time.Time{from, to})
	tk.mu.Unlock()
}

func (tk *takeovers) note(list *[]string, s string) {
	tk.mu.Lock()
	*list = append(*list, s)
	tk.mu.Unlock()
}

// heldBy lists the orders the worker process pid held: claimed by it in the
// ledger, or under an activate or close task asynq lists it running.
func heldBy(ctx context.Context, db *sql.DB, rdb redis.UniversalClient, pid int) ([]string, error) {
	p := ":" + strconv.Itoa(pid) + ":"
	held := map[string]bool{}
	err := query(ctx, db, func(rows *sql.Rows) error {
		var no string
		if err := rows.Scan(&no); err != nil {
			return err
		}
		held[no] = true
		return nil
	}, `SELECT order_no FROM orders WHERE status = 6 AND claimed_by LIKE ?`, "%"+p+"%")
	if err != nil {
		return nil, err
	}
	keys, err := rdb.ZRange(ctx, "asynq:workers", 0, -1).Result()
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if !strings.Contains(k, p) {
			continue
		}
		ids, err := rdb.HKeys(ctx, k).Result()
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			// Task IDs are <type>:<number>:<generation>.
			for _, typ := range []string{"order:activate:", "order:close:"} {
				if rest, ok := strings.CutPrefix(id, typ); ok {
					if no, _, ok := strings.Cut(rest, ":"); ok {
						held[no] = true
					}
				}
			}
		}
	}
	out := make([]string, 0, len(held))
	for no := range held {
		out = append(out, no)
	}
	slices.Sort(out)
	return out, nil
}

// notDone returns the orders of nos still pending, paid or claimed.
func notDone(ctx context.Context, db *sql.DB, nos []string) []string {
	args := make([]any, len(nos))
	for i, no := range nos {
		args[i] = no
	}
	q := `SELECT order_no FROM orders WHERE status IN (1, 2, 6) AND order_no IN (?` + strings.Repeat(",?", len(nos)-1) + `)`
	var left []string
	err := query(ctx, db, func(rows *sql.Rows) error {
		var no string
		if rows.Scan(&no) == nil {
			left = append(left, no)
		}
		return nil
	}, q, args...)
	if err != nil {
		return nos // the database may be the fault of the moment: ask again
	}
	return left
}

// TakeoverStats is the report's line on worker kills.
type TakeoverStats struct {
	Kills, Orders, Empty int
	P50, P99, Max        time.Duration
	Slowest              string
	// DuringOutage counts the kills whose wait crossed a database outage,
	// and the longest of those waits.
	DuringOutage     int
	DuringOutageMax  time.Duration
	Unknown, Pending []string
}

// stats waits for every watch and sums them up.
func (tk *takeovers) stats() TakeoverStats {
	tk.wg.Wait()
	tk.mu.Lock()
	defer tk.mu.Unlock()
	s := TakeoverStats{Kills: len(tk.times), Orders: tk.orders, Empty: tk.empty, Slowest: tk.slowest,
		DuringOutage: len(tk.overlapped), Unknown: slices.Clone(tk.unknown), Pending: slices.Clone(tk.pending)}
	if len(tk.overlapped) > 0 {
		s.DuringOutageMax = slices.Max(tk.overlapped)
	}
	if len(tk.times) > 0 {
		t := slices.Clone(tk.times)
		slices.Sort(t)
		at := func(q float64) time.Duration { return t[min(len(t)-1, int(q*float64(len(t))))] }
		s.P50, s.P99, s.Max = at(0.5), at(0.99), t[len(t)-1]
	}
	return s
}

// String is the report's takeover line.
func (s TakeoverStats) String() string {
	line := fmt.Sprintf("takeover: %d worker kills held %d orders, every one done by another process in p50 %s, p99 %s, max %s (%s); %d kills held nothing; %d waited across a database outage (longest %s)",
		s.Kills, s.Orders, s.P50.Round(10*time.Millisecond), s.P99.Round(10*time.Millisecond), s.Max.Round(10*time.Millisecond), s.Slowest,
		s.Empty, s.DuringOutage, s.DuringOutageMax.Round(10*time.Millisecond))
	if len(s.Unknown) > 0 {
		line += fmt.Sprintf("; %d kills not measured (%s)", len(s.Unknown), s.Unknown[0])
	}
	if len(s.Pending) > 0 {
		line += fmt.Sprintf("; NOT DONE: %s", strings.Join(s.Pending, "; "))
	}
	return line
}
