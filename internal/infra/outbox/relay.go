// Package outbox moves committed outbox rows into asynq: at once after the
// commit that wrote them (the fast path) and by polling (the safety net for a
// crash or a Redis outage between commit and enqueue).
package outbox

import (
	"context"
	"errors"
	"time"

	"orderflow/internal/infra/idlepoll"
	"orderflow/internal/infra/tasks"
	"orderflow/internal/infra/tracing"
	"orderflow/model"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
)

// Relay pushes outbox rows to asynq and deletes the ones asynq holds.
type Relay struct {
	store     *model.Store
	client    *asynq.Client
	inspector *asynq.Inspector
	rdb       redis.UniversalClient
	table     tasks.Table
	log       *zap.Logger
	deleter   *deleter
}

// New returns a relay. rdb is the Redis asynq runs on (LiveMany reads it).
func New(store *model.Store, client *asynq.Client, inspector *asynq.Inspector, rdb redis.UniversalClient, table tasks.Table, log *zap.Logger) *Relay {
	return &Relay{store: store, client: client, inspector: inspector, rdb: rdb, table: table, log: log,
		deleter: &deleter{store: store, log: log}}
}

// Live reports whether a task will still run: waiting in the outbox, or held
// by asynq in a state that runs. The outbox is asked first: the relay
// enqueues before it deletes the row, so a task is always in one of the two.
func (r *Relay) Live(ctx context.Context, typ, id string) (bool, error) {
	waiting, err := r.store.OutboxHas(ctx, id)
	if err != nil || waiting {
		return waiting, err
	}
	return r.table.Live(r.inspector, typ, id)
}

// LiveMany is Live for many tasks of one type: the outbox is asked first in
// one query, then asynq for the rest in one pipelined round trip (the same
// order as Live, so a task moving from one to the other is seen in one).
func (r *Relay) LiveMany(ctx context.Context, typ string, ids []string) (map[string]bool, error) {
	live, err := r.store.OutboxWaiting(ctx, ids)
	if err != nil {
		return nil, err
	}
	rest := make([]string, 0, len(ids))
	for _, id := range ids {
		if !live[id] {
			rest = append(rest, id)
		}
	}
	held, err := r.table.LiveMany(ctx, r.rdb, typ, rest)
	if err != nil {
		return nil, err
	}
	for id := range held {
		live[id] = true
	}
	return live, nil
}

// Resend pushes rows that have waited in the outbox too long (the sweep's
// share of the safety net) and reports how many asynq now holds.
func (r *Relay) Resend(ctx context.Context, rows []model.OutboxRow) (int, error) {
	return r.push(ctx, rows)
}

// fastPathTimeout bounds the post-commit enqueue: with Redis down the request
// must still answer quickly, and the poller will deliver the row later.
const fastPathTimeout = 500 * time.Millisecond

// SendRows is the fast path: it enqueues rows a transaction has just
// committed (the ledger's after-commit work hands them over, so there is no
// read back) and deletes them in the background (see deleter). Failure is
// logged, not returned: the rows stay in the outbox and the poller retries
// them. If a row met one already waiting with its task ID (so it was not
// written), this still sends the task — asynq takes it once — and the
// waiting row, whose key differs, is left to its own writer or the poller.
// It reports whether a task due now went in: the caller announces it
// (idlepoll.AnnounceIn), in the round trip of its own after-commit work.
func (r *Relay) SendRows(ctx context.Context, rows ...*model.OutboxRow) (wake bool) {
	if len(rows) == 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fastPathTimeout)
	defer cancel()
	done := make([]model.OutboxKey, 0, len(rows))
	dueNow := false
	for _, row := range rows {
		if row == nil {
			continue
		}
		if err := r.enqueue(ctx, row); err != nil {
			r.log.Warn("outbox fast path failed; poller will retry", zap.String("task_id", row.TaskID), zap.Error(err))
			continue
		}
		done = append(done, row.Key())
		dueNow = dueNow || isDueNow(row)
	}
	r.deleter.add(done)
	return dueNow
}

// Flush waits until the rows SendRows handed to asynq are deleted (or ctx
// ends): called on shutdown, so a clean stop leaves nothing for the poller.
func (r *Relay) Flush(ctx context.Context) error { return r.deleter.flush(ctx) }

// drainBatch bounds one poller read.
const drainBatch = 200

// drain enqueues every waiting row with an id of at most upTo, a page at a
// time, and returns how many it moved. Rows it cannot enqueue (an unknown
// task type) stay behind without stopping the rows after them.
func (r *Relay) drain(ctx context.Context, upTo int64) (int, error) {
	total := 0
	var after int64
	for {
		rows, err := r.store.OutboxBetween(ctx, after, upTo, drainBatch)
		if err != nil || len(rows) == 0 {
			return total, err
		}
		n, err := r.push(ctx, rows)
		total += n
		if err != nil || len(rows) < drainBatch {
			return total, err
		}
		after = rows[len(rows)-1].ID
	}
}

// Run drains the outbox every interval until ctx ends. A pass takes only the
// rows with an id up to the newest seen at the previous pass (at the first,
// all of them) — rows that were, give or take a commit in flight, already
// waiting then: a younger row is its writer's fast path's, and racing that would
// enqueue and delete it twice (and the two DELETEs can deadlock). So a row
// whose fast path failed goes to asynq within two intervals.
func (r *Relay) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	upTo, err := r.store.OutboxMaxID(ctx) // rows waiting at start are old
	for {
		if err == nil {
			var n int
			if n, err = r.drain(ctx, upTo); n > 0 {
				r.log.Info("outbox drained by poller", zap.Int("moved", n))
			}
		}
		if err != nil && ctx.Err() == nil {
			r.log.Warn("outbox drain failed", zap.Error(err))
		}
		var next int64
		next, err = r.store.OutboxMaxID(ctx) // the next pass's rows
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		upTo = next
	}
}

// push enqueues rows and deletes those asynq now holds, in one statement,
// before it returns: the poller's next batch must not read them again.
func (r *Relay) push(ctx context.Context, rows []model.OutboxRow) (int, error) {
	done := make([]model.OutboxKey, 0, len(rows))
	dueNow := false
	var firstErr error
	for i := range rows {
		err := r.enqueue(ctx, &rows[i])
		if errors.Is(err, errUnknownType) {
			continue
		}
		if err != nil {
			firstErr = err
			break
		}
		done = append(done, rows[i].Key())
		dueNow = dueNow || isDueNow(&rows[i])
	}
	if dueNow {
		idlepoll.Announce(ctx, r.rdb)
	}
	if err := r.store.DeleteOutbox(context.WithoutCancel(ctx), done); err != nil {
		return 0, err
	}
	return len(done), firstErr
}

var errUnknownType = errors.New("unknown task type")

// isDueNow is whether a row's task goes straight to a queue (not to asynq's
// schedule): the workers are told (idlepoll.Announce) so they take it at once.
func isDueNow(row *model.OutboxRow) bool { return !row.ProcessAt.After(time.Now()) }

// enqueue hands one row's task to asynq. A task ID asynq already has means
// an earlier push got through: the row is done too. The hand-off is a span
// in the trace of the transaction that wrote the row (its traceparent
// column), and the task's headers carry this span on to the worker.
func (r *Relay) enqueue(ctx context.Context, row *model.OutboxRow) error {
	var headers map[string]string
	if tracing.On() {
		if row.TraceContext != nil {
			ctx = tracing.WithTraceparent(ctx, *row.TraceContext)
		}
		var span trace.Span
		ctx, span = tracing.Tracer().Start(ctx, "outbox.enqueue "+row.TaskType, trace.WithSpanKind(trace.SpanKindProducer),
			trace.WithAttributes(attribute.String("orderflow.task_id", row.TaskID)))
		defer span.End()
		headers = map[string]string{tracing.HeaderKey: tracing.Traceparent(ctx)}
	}
	task, err := r.table.NewTaskWithHeaders(row.TaskType, row.TaskID, row.Payload, row.ProcessAt, headers)
	if err != nil {
		r.log.Error("outbox row has an unknown task type; leaving it", zap.String("task_id", row.TaskID), zap.Error(err))
		return errUnknownType
	}
	_, err = r.client.EnqueueContext(ctx, task)
	if errors.Is(err, asynq.ErrTaskIDConflict) {
		return nil
	}
	return err
}
