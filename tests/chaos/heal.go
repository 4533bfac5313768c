package chaos

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"orderflow/internal/infra/stock"
	"orderflow/internal/infra/tasks"

	"github.com/redis/go-redis/v9"
)

// queueOf is the asynq queue each task type lives in (the product's table).
var queueOf = func() map[string]string {
	out := map[string]string{}
	for typ, spec := range tasks.NewTable(tasks.Config{RefundRetryDelays: []time.Duration{time.Second}, SettleRetryDelays: []time.Duration{time.Second}}) {
		out[typ] = spec.Queue
	}
	return out
}()

// healState is what is still broken after the faults: objects that are not
// terminal and hold no live task, and stock counters that disagree with the
// ledger.
type healState struct {
	checked  int
	orphans  []string // "<task id>" of non-terminal objects with no live task
	counters []string // products whose counter differs from the ledger
	// unlisted are queues missing from asynq's queue registry: asynqmon and
	// the asynq_* metrics do not show them.
	unlisted   []string
	unreadable error
}

func (h healState) healed() bool {
	return h.unreadable == nil && len(h.orphans) == 0 && len(h.counters) == 0 && len(h.unlisted) == 0
}

func (h healState) String() string {
	if h.unreadable != nil {
		return "unreadable: " + h.unreadable.Error()
	}
	show := func(l []string) string {
		if len(l) > 3 {
			return strings.Join(l[:3], ", ") + fmt.Sprintf(" … (%d)", len(l))
		}
		return strings.Join(l, ", ")
	}
	return fmt.Sprintf("%d objects checked; without a live task: [%s]; counters off: [%s]; queues not listed: [%s]",
		h.checked, show(h.orphans), show(h.counters), show(h.unlisted))
}

// expectedTasks lists, for every non-terminal object, the task ID that must
// be live for it to move: a pending order's close, a paid or claimed order's
// activation, a processing refund's execution, an OPEN or CLOSED group's
// settlement — each under the generation the ledger holds now. (A refunding
// order is moved by its refunds.)
const expectedTasks = "" +
	"SELECT 'order:close', order_no, close_gen FROM orders WHERE status = 1 " +
	"UNION ALL SELECT 'order:activate', order_no, activate_gen FROM orders WHERE status IN (2, 6) " +
	"UNION ALL SELECT 'refund:execute', refund_no, task_gen FROM refunds WHERE status = 'processing' " +
	"UNION ALL SELECT 'group:settle', group_no, settle_gen FROM `groups` WHERE status IN ('OPEN', 'CLOSED')"

// readHeal checks every non-terminal object for a live task — an outbox row
// waiting for the relay, or an asynq task that is pending, scheduled,
// retrying or running (read from asynq's own task hash) — and every limited
// product's Redis counter against the ledger (a missing counter is fine: it
// is rebuilt from the ledger on demand), and that asynq's queue registry
// lists every queue.
func readHeal(ctx context.Context, db *sql.DB, rdb *redis.Client) healState {
	var h healState
	listed, err := rdb.SMembers(ctx, tasks.QueueRegistryKey).Result()
	if err != nil {
		return healState{unreadable: err}
	}
	for _, q := range tasks.NewTable(tasks.Config{}).Queues() {
		if !slices.Contains(listed, q) {
			h.unlisted = append(h.unlisted, q)
		}
	}
	waiting := map[string]bool{}
	err = query(ctx, db, func(rows *sql.Rows) error {
		var id string
		if err := rows.Scan(&id); err == nil {
			waiting[id] = true
		}
		return nil
	}, `SELECT task_id FROM outbox`)
	if err != nil {
		return healState{unreadable: err}
	}
	type want struct{ typ, id string }
	var wants []want
	err = query(ctx, db, func(rows *sql.Rows) error {
		var typ, no string
		var gen int
		if err := rows.Scan(&typ, &no, &gen); err != nil {
			return err
		}
		wants = append(wants, want{typ, tasks.ID(typ, no, gen)})
		return nil
	}, expectedTasks)
	if err != nil {
		return healState{unreadable: err}
	}
	pipe := rdb.Pipeline()
	states := make([]*redis.StringCmd, len(wants))
	for i, w := range wants {
		states[i] = pipe.HGet(ctx, "asynq:{"+queueOf[w.typ]+"}:t:"+w.id, "state")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return healState{unreadable: err}
	}
	for i, w := range wants {
		h.checked++
		switch st, _ := states[i].Result(); st {
		case "pending", "scheduled", "retry", "active":
		default:
			if !waiting[w.id] {
				h.orphans = append(h.orphans, w.id+" ("+orNone(st)+")")
			}
		}
	}
	counts, err := keyed[int64](ctx, db, "SELECT p.id, CASE WHEN p.kind = 'card' THEN "+
		"(SELECT COUNT(*) FROM card_keys k WHERE k.product_id = p.id AND k.status IN ('UNSOLD', 'RECYCLED')) ELSE p.stock END "+
		"FROM products p WHERE p.kind = 'card' OR p.stock IS NOT NULL")
	if err != nil {
		return healState{unreadable: err}
	}
	for id, want := range counts {
		var pid int64
		if _, err := fmt.Sscan(id, &pid); err != nil {
			return healState{unreadable: fmt.Errorf("stock product id %q: %w", id, err)}
		}
		got, err := rdb.Get(ctx, stock.Key(pid)).Int64()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return healState{unreadable: err}
		}
		if got != want {
			h.counters = append(h.counters, fmt.Sprintf("product %d: counter %d, ledger %d", pid, got, want))
		}
	}
	return h
}

func orNone(s string) string {
	if s == "" {
		return "no task"
	}
	return s
}

// timeToHeal polls from the end of the last fault until every object is
// terminal or holds a live task and every counter equals the ledger. The
// workload may still run, so a pass can catch an object between its move
// and its task (a task completed, a counter taken before its commit): what
// one pass finds is only broken if the next pass, 200 ms later, finds it
// too.
func timeToHeal(ctx context.Context, db *sql.DB, rdb *redis.Client, from time.Time, within time.Duration) (time.Duration, bool, healState) {
	var last healState
	for time.Since(from) < within && ctx.Err() == nil {
		first := readHeal(ctx, db, rdb)
		if first.healed() {
			return time.Since(from), true, first
		}
		sleep(ctx, 200*time.Millisecond)
		last = agreeing(first, readHeal(ctx, db, rdb))
		if last.healed() {
			return time.Since(from), true, last
		}
	}
	return time.Since(from), false, last
}

// agreeing keeps what two passes found alike.
func agreeing(a, b healState) healState {
	if a.unreadable != nil || b.unreadable != nil {
		return healState{unreadable: errors.Join(a.unreadable, b.unreadable)}
	}
	keep := func(x, y []string) []string {
		in := map[string]bool{}
		for _, v := range x {
			in[v] = true
		}
		var out []string
		for _, v := range y {
			if in[v] {
				out = append(out, v)
			}
		}
		return out
	}
	return healState{checked: b.checked, orphans: keep(a.orphans, b.orphans), counters: keep(a.counters, b.counters),
		unlisted: keep(a.unlisted, b.unlisted)}
}

// forgetShare deletes a share of asynq's waiting tasks (pending, scheduled,
// retrying: the task hash and its entry in the queue's list or set) and of
// the stock keys — counters, and the keys beside them (moves counts, gap
// notes, take markers) — and asynq's queue registry (which its processes
// fill only once each), leaving the epoch marker, the restore markers and
// everything else alone.
func (r *redisServer) forgetShare(ctx context.Context, rng *rand.Rand, share float64) (lost forgotten, err error) {
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr()})
	defer rdb.Close()
	if err := rdb.Del(ctx, tasks.QueueRegistryKey).Err(); err != nil {
		return lost, err
	}
	queues := map[string]bool{}
	for _, q := range queueOf {
		queues[q] = true
	}
	for q := range queues {
		prefix := "asynq:{" + q + "}:"
		pending, err := rdb.LRange(ctx, prefix+"pending", 0, -1).Result()
		if err != nil {
			return lost, err
		}
		for _, id := range pending {
			if rng.Float64() < share {
				rdb.LRem(ctx, prefix+"pending", 0, id)
				rdb.Del(ctx, prefix+"t:"+id)
				lost.tasks++
			}
		}
		for _, set := range []string{"scheduled", "retry"} {
			ids, err := rdb.ZRange(ctx, prefix+set, 0, -1).Result()
			if err != nil {
				return lost, err
			}
			for _, id := range ids {
				if rng.Float64() < share {
					rdb.ZRem(ctx, prefix+set, id)
					rdb.Del(ctx, prefix+"t:"+id)
					lost.tasks++
				}
			}
		}
	}
	iter := rdb.Scan(ctx, 0, "stock:{p*}", 500).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		if strings.Contains(k, ":restored:") || rng.Float64() >= share {
			continue
		}
		rdb.Del(ctx, k)
		if strings.HasSuffix(k, "}") { // the counter itself (stock.Key)
			lost.counters++
		} else {
			lost.beside++
		}
	}
	return lost, iter.Err()
}

// forgotten is what forgetShare deleted.
type forgotten struct{ tasks, counters, beside int }
