package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"orderflow/internal/domain/group"
	"orderflow/internal/domain/order"
	"orderflow/internal/domain/refund"
	"orderflow/internal/domain/statement"
	"orderflow/internal/domain/webhook"
	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/metrics"
	"orderflow/internal/infra/outbox"
	"orderflow/internal/infra/stock"
	"orderflow/internal/infra/tasks"
	"orderflow/model"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// SweepStateKey is where a budget-cut pass leaves its place (JSON
// sweepState) for the next pass, on whichever worker that runs. Lost with
// Redis, the next pass starts over: nothing but time is lost.
const SweepStateKey = "orderflow:sweep:state"

// Sweeper is the continuous sweep: it walks every kind of non-terminal
// object, a page at a time to the end, and re-queues under a new
// generation each one whose current task is not live (missing from the
// outbox and from asynq, or archived after its retries). One mechanism for
// every kind: a kind only says how to read a page and how to re-queue one
// object in the ledger.
type Sweeper struct {
	Store *model.Store
	Redis redis.UniversalClient
	Relay *outbox.Relay
	// Queue re-queues a lost task; its ErrDuplicate is "already queued".
	Queue   tasks.Enqueuer
	Tasks   tasks.Table
	Orders  *order.Service
	Refunds *refund.Service
	Groups  *group.Service
	// Webhooks re-queues undelivered shop webhooks whose task was lost.
	Webhooks *webhook.Service
	// Statements re-queues a statement run whose task was lost; nil: none.
	Statements *statement.Service
	Stock      *stock.Counter
	Metrics    *metrics.Metrics
	Clock      clock.Clock
	Log        *zap.Logger
	// Page is how many objects one read takes (and one liveness round trip checks).
	Page int
	// Budget bounds one scheduled pass's wall time; the next pass resumes
	// from where it stopped. Zero walks everything.
	Budget time.Duration
	// RelayInterval: outbox rows older than two of these are the sweep's.
	RelayInterval time.Duration
	// NotifyInterval is the notification job's period (its slot IDs).
	NotifyInterval time.Duration
	// Interval is the sweep's own period: a payment query's slot.
	Interval time.Duration
	// PayQueryAfter: a started payment not notified this long after it
	// started is asked about at its provider.
	PayQueryAfter time.Duration
}

// sweepState is a pass's place: the kind it stopped in and its cursor.
type sweepState struct {
	Kind   int          `json:"kind"`
	Cursor model.Cursor `json:"cursor"`
}

// Pass is one scheduled sweep pass: it resumes where the previous pass
// stopped, goes round every kind once, and stops early when its budget is
// spent (remembering where). It records its report in the log, the
// process's metrics and the fleet's last-pass key.
func (s *Sweeper) Pass(ctx context.Context) (metrics.SweepPass, error) {
	st := s.loadState(ctx)
	rep, next, err := s.walk(ctx, st, s.Budget)
	s.saveState(ctx, next, rep.Complete)
	s.Metrics.Swept(ctx, rep)
	tot := rep.Totals()
	log := s.Log.Info
	if tot.Requeued > 0 || err != nil {
		log = s.Log.Warn
	}
	log("sweep pass", zap.Bool("complete", rep.Complete), zap.Int("checked", tot.Checked), zap.Int("requeued", tot.Requeued),
		zap.Float64("seconds", rep.Seconds), zap.Any("kinds", rep.Kinds), zap.Error(err))
	return rep, err
}

// Full walks every kind from the start to the end with no budget (the
// reconciliation's pass); it leaves the scheduled passes' place alone.
func (s *Sweeper) Full(ctx context.Context) (metrics.SweepPass, error) {
	rep, _, err := s.walk(ctx, sweepState{}, 0)
	return rep, err
}

// walk goes round the kinds once from st. A kind that fails is reported
// and skipped (the next pass tries it again), so one broken kind does not
// stop the others. It first puts every queue back in asynq's queue
// registry, which asynq itself fills only once per process: after a
// partial Redis loss that took it, this is what shows the queues again.
func (s *Sweeper) walk(ctx context.Context, st sweepState, budget time.Duration) (metrics.SweepPass, sweepState, error) {
	started := time.Now()
	rep := metrics.SweepPass{StartedAt: s.Clock.Now(), Kinds: map[string]metrics.SweepKind{}}
	var deadline time.Time
	if budget > 0 {
		deadline = started.Add(budget)
	}
	if err := s.Tasks.RestoreQueueRegistry(ctx, s.Redis); err != nil {
		// Only the operators' view suffers (asynqmon, asynq_* metrics);
		// the tasks run all the same, and the next pass tries again.
		s.Log.Warn("asynq queue registry not restored", zap.Error(err))
	}
	if _, err := s.Groups.FlushExhausted(ctx); err != nil {
		// A group whose last settle try could not write FAILED is still
		// CLOSED; left unflushed, the groups kind gives it a new budget.
		s.Log.Warn("exhausted settlements not flushed before the sweep", zap.Error(err))
	}
	if err := s.alertPausedQueues(ctx); err != nil {
		s.Log.Warn("paused queues not checked; the next pass looks again", zap.Error(err))
	}
	kinds := s.kinds()
	st.Kind = min(max(st.Kind, 0), len(kinds)-1)
	var errs []error
	rep.Complete = true
	for i := range kinds {
		k := (st.Kind + i) % len(kinds)
		cur := model.Cursor{}
		if i == 0 {
			cur = st.Cursor
		}
		kind := kinds[k]
		count, next, done, err := kind.walk(ctx, walkAt{cur: cur, start: rep.StartedAt, deadline: deadline})
		c := rep.Kinds[kind.name]
		c.Checked += count.Checked
		c.Requeued += count.Requeued
		rep.Kinds[kind.name] = c
		if err != nil {
			rep.Complete = false
			errs = append(errs, fmt.Errorf("sweep %s: %w", kind.name, err))
		}
		if !done && err == nil {
			rep.Complete = false
			rep.Seconds = time.Since(started).Seconds()
			return rep, sweepState{Kind: k, Cursor: next}, errors.Join(errs...)
		}
	}
	rep.Seconds = time.Since(started).Seconds()
	err := errors.Join(errs...)
	if err != nil {
		rep.Error = err.Error()
	}
	return rep, sweepState{}, err
}

func (s *Sweeper) loadState(ctx context.Context) sweepState {
	var st sweepState
	b, err := s.Redis.Get(ctx, SweepStateKey).Bytes()
	if err == nil {
		_ = json.Unmarshal(b, &st) // unreadable: start over
	}
	return st
}

func (s *Sweeper) saveState(ctx context.Context, st sweepState, complete bool) {
	var err error
	if complete {
		err = s.Redis.Del(ctx, SweepStateKey).Err()
	} else {
		b, _ := json.Marshal(st)
		err = s.Redis.Set(ctx, SweepStateKey, b, 0).Err()
	}
	if err != nil {
		s.Log.Warn("sweep place not saved; the next pass starts over", zap.Error(err))
	}
}

// walkAt is where one kind's walk starts: its cursor, the pass's start
// (rows touched after it, which the walk itself re-queued, are not read
// again) and the wall-clock deadline (zero: none).
type walkAt struct {
	cur      model.Cursor
	start    time.Time
	deadline time.Time
}

func (w walkAt) spent() bool { return !w.deadline.IsZero() && !time.Now().Before(w.deadline) }

// object is one row a kind read: its cursor, the task ID of its current
// generation ("" = re-queue without asking, a stuck claim) and how to
// re-queue it (false: it had moved on; nil: leave it, its mover is at work
// now — a webhook's post in flight). A re-queue's transaction sends its
// row after its commit.
type object struct {
	cur     model.Cursor
	taskID  string
	requeue func(context.Context) (bool, error)
}

// walkObjects is the one re-queue loop: read a page after the cursor, ask
// which of its current tasks are live (one outbox query, one Redis round
// trip), re-queue the rest (each re-queue sends its row after its commit),
// go on until the end or the deadline. It returns the count, the cursor reached and whether the walk
// reached the end.
func (s *Sweeper) walkObjects(ctx context.Context, taskType string, w walkAt, page pageFunc) (metrics.SweepKind, model.Cursor, bool, error) {
	var count metrics.SweepKind
	cur := w.cur
	for {
		objs, err := page(ctx, walkAt{cur: cur, start: w.start}, s.Page)
		if err != nil {
			return count, cur, false, err
		}
		ids := make([]string, 0, len(objs))
		for _, o := range objs {
			if o.taskID != "" {
				ids = append(ids, o.taskID)
			}
		}
		live, err := s.Relay.LiveMany(ctx, taskType, ids)
		if err != nil {
			return count, cur, false, err
		}
		for _, o := range objs {
			count.Checked++
			if o.requeue == nil || o.taskID != "" && live[o.taskID] {
				continue
			}
			requeued, err := o.requeue(ctx)
			if err != nil {
				return count, cur, false, err
			}
			if requeued {
				count.Requeued++
			}
		}
		if len(objs) < s.Page {
			return count, model.Cursor{}, true, nil
		}
		cur = objs[len(objs)-1].cur
		if w.spent() {
			return count, cur, false, nil
		}
	}
}

// objectsOf maps a page of rows to the walk's objects: every kind's page
// has this one shape, a kind only says what one row's object is.
func objectsOf[T any](rows []T, err error, of func(*T) object) ([]object, error) {
	out := make([]object, len(rows))
	for i := range rows {
		out[i] = of(&rows[i])
	}
	return out, err
}
