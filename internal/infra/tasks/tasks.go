// Package tasks is the one task-type table: every asynq task type orderflow
// runs, its queue, retry budget, timeout and retry schedule, and its payload.
// Producers (the outbox relay) and consumers (the queue worker) both read it.
package tasks

import (
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// Task types.
const (
	// TypeOrderActivate claims, delivers and finalizes a paid order.
	TypeOrderActivate = "order:activate"
	// TypeOrderClose closes a pending order at its expiry and gives its stock back.
	TypeOrderClose = "order:close"
	// TypeRefundExecute sends a refund to the provider and asks until it is final.
	TypeRefundExecute = "refund:execute"
	// TypeGroupSettle closes a group-buy at its deadline and charges every participant.
	TypeGroupSettle = "group:settle"
	// TypeNotifyDeliver drains the pending-notification list to the webhook.
	TypeNotifyDeliver = "notify:deliver"
	// TypePaymentQuery asks the providers an order's payment was started at
	// whether it was paid (a lost notification); queued by the sweep for
	// each pending order with a started payment, once per sweep slot.
	TypePaymentQuery = "payment:query"
	// TypeWebhookDeliver posts one shop webhook to the shop's receiver.
	TypeWebhookDeliver = "webhook:deliver"
	// TypeSweep is the continuous sweep: every non-terminal object without a
	// live task is re-queued under a new generation, stuck claims reset.
	TypeSweep = "periodic:sweep"
	// TypeReconcile is the periodic reconciliation of the ledger against
	// what timers and Redis may have missed.
	TypeReconcile = "periodic:reconcile"
	// TypeStatementRun reads one provider's statement of one day and
	// matches it against the ledger (internal/domain/statement).
	TypeStatementRun = "statement:run"
	// TypeStatements is the daily job (ORDERFLOW_STATEMENT_SCHEDULE) that
	// opens a run of yesterday and of the look-back days, per provider.
	TypeStatements = "periodic:statements"
)

// Queues and their weights: activation first, sweeps last.
const (
	QueueCritical = "critical"
	QueueClose    = "close"
	QueueDefault  = "default"
	QueueLow      = "low"
)

// QueueWeights is the asynq Queues config. Closes have their own queue so
// its size is the close backlog.
var QueueWeights = map[string]int{QueueCritical: 6, QueueClose: 3, QueueDefault: 3, QueueLow: 1}

// Spec is how one task type is queued and retried.
type Spec struct {
	Queue    string
	MaxRetry int
	Timeout  time.Duration
	// Retention keeps a finished task's ID taken for this long, so a
	// duplicate enqueue of the same ID (another process, the same period) is refused.
	Retention time.Duration
	// Delay is the wait after a failed try when the task has already been
	// retried n times (asynq's count: n = 0 after the first failure).
	Delay func(n int) time.Duration
	// RidesOut is the outage (every try failing at once, as with refused
	// database connections) one generation is documented to outlast before
	// asynq archives it; a test holds RetrySpan to it at the defaults.
	RidesOut time.Duration
	// Exhausted says who takes over when asynq archives the task.
	Exhausted Exhaustion
}

// Config holds the configured parts of the table.
type Config struct {
	ActivateTimeout    time.Duration
	ActivateRetryDelay time.Duration // first retry; doubled each time, capped at 32×
	SweepInterval      time.Duration
	RefundRetryDelays  []time.Duration
	SettleRetryDelays  []time.Duration
	PayTimeout         time.Duration
	NotifyInterval     time.Duration
	WebhookRetryDelay  time.Duration // first retry; doubled each time, capped at one hour
	// StatementRetryDelay is a statement run's first retry; doubled each
	// time, capped at 32×. Zero: a minute.
	StatementRetryDelay time.Duration
}

// Table maps a task type to its spec.
type Table map[string]Spec

// NewTable builds the table for a configuration.
func NewTable(c Config) Table {
	if c.StatementRetryDelay <= 0 {
		c.StatementRetryDelay = time.Minute
	}
	return Table{
		TypeOrderActivate: {
			// The attempts cap (paid→failed) is the handler's own decision,
			// counted on claims; an archived task of a paid order is the sweep's.
			Queue: QueueCritical, MaxRetry: 5, Timeout: c.ActivateTimeout,
			Delay:    doubling(c.ActivateRetryDelay, 32),
			RidesOut: 30 * time.Second, Exhausted: ExhaustedToSweep,
		},
		TypeOrderClose: {
			Queue: QueueClose, MaxRetry: 10, Timeout: time.Minute,
			Delay:    doubling(c.ActivateRetryDelay, 32),
			RidesOut: 3 * time.Minute, Exhausted: ExhaustedToSweep,
		},
		TypeRefundExecute: {
			// Retries are the active-query schedule too; the attempts cap
			// (→manual) is the handler's decision.
			Queue: QueueDefault, MaxRetry: 40, Timeout: 3*c.PayTimeout + 5*time.Second,
			Delay:    stepped(c.RefundRetryDelays),
			RidesOut: 12 * time.Hour, Exhausted: ExhaustedToSweep,
		},
		TypeGroupSettle: {
			// The retry budget is asynq's: its count lives in Redis with the
			// task, so it survives a crashed worker and a different machine.
			// The last try moves the group to FAILED (or leaves that to the
			// Redis pending set while the database is down).
			Queue: QueueDefault, MaxRetry: len(c.SettleRetryDelays), Timeout: time.Minute,
			Delay:    stepped(c.SettleRetryDelays),
			RidesOut: 30 * time.Second, Exhausted: ExhaustedToTerminal,
		},
		TypeNotifyDeliver: {
			Queue: QueueLow, MaxRetry: 0, Timeout: time.Minute,
			Retention: 2 * c.NotifyInterval,
			Delay:     doubling(time.Second, 1),
			Exhausted: ExhaustedToNextSlot,
		},
		TypeWebhookDeliver: {
			// Retried until a 2xx: 25 retries doubling from 5 s to the
			// one-hour cap are about 16 h; then the sweep, finding the task
			// archived, queues a new generation with a fresh budget.
			Queue: QueueDefault, MaxRetry: 25, Timeout: time.Minute,
			Delay:    capped(c.WebhookRetryDelay, time.Hour),
			RidesOut: 10 * time.Minute, Exhausted: ExhaustedToSweep,
		},
		TypeReconcile: {
			// A pass triggered by a missing epoch marker has no second chance
			// until the schedule: 20 retries doubling from 1 s to 64 s are
			// 959 s, past a 15 min database outage.
			Queue: QueueLow, MaxRetry: 20, Timeout: 10 * time.Minute,
			Retention: 24 * time.Hour,
			Delay:     doubling(time.Second, 64),
			RidesOut:  15 * time.Minute, Exhausted: ExhaustedToNextSlot,
		},
		TypePaymentQuery: {
			// One question per sweep slot; a failed one waits for the next
			// slot's (and the close asks again before it closes).
			Queue: QueueDefault, MaxRetry: 2, Timeout: 2*c.PayTimeout + 5*time.Second,
			Retention: 2 * c.SweepInterval,
			Delay:     doubling(time.Second, 4),
			Exhausted: ExhaustedToNextSlot,
		},
		TypeStatementRun: {
			// A provider that has not published the day yet, or cannot be
			// reached, is asked again: 10 retries doubling from a minute to
			// the 32-minute cap are about 3.5 h; the last try fails the run
			// and alerts the admin.
			Queue: QueueLow, MaxRetry: 10, Timeout: 30 * time.Minute,
			Delay:    doubling(c.StatementRetryDelay, 32),
			RidesOut: time.Hour, Exhausted: ExhaustedToTerminal,
		},
		TypeStatements: {
			Queue: QueueLow, MaxRetry: 5, Timeout: time.Minute,
			Retention: 24 * time.Hour,
			Delay:     doubling(time.Second, 16),
			Exhausted: ExhaustedToNextSlot,
		},
		TypeSweep: {
			Queue: QueueLow, MaxRetry: 0, Timeout: c.SweepInterval,
			Retention: 2 * c.SweepInterval,
			Delay:     doubling(time.Second, 1),
			Exhausted: ExhaustedToNextSlot,
		},
	}
}

// stepped waits delays[n] after n earlier retries, and the last delay for
// every retry after those.
func stepped(delays []time.Duration) func(int) time.Duration {
	return func(n int) time.Duration {
		if len(delays) == 0 {
			return time.Minute
		}
		return delays[min(max(n, 0), len(delays)-1)]
	}
}

// capped doubles from first, never past most.
func capped(first, most time.Duration) func(int) time.Duration {
	return func(n int) time.Duration {
		if first <= 0 {
			return most
		}
		d := first
		for range min(max(n, 0), 40) {
			if d *= 2; d >= most {
				return most
			}
		}
		return d
	}
}

func doubling(first time.Duration, capFactor int) func(int) time.Duration {
	return func(n int) time.Duration {
		f := 1 << min(max(n, 0), 30)
		return first * time.Duration(min(f, capFactor))
	}
}

// RetryDelay is the asynq RetryDelayFunc: each type's own schedule.
func (t Table) RetryDelay(n int, _ error, task *asynq.Task) time.Duration {
	if s, ok := t[task.Type()]; ok && s.Delay != nil {
		return alignToSecond(time.Now(), s.Delay(n))
	}
	return asynq.DefaultRetryDelayFunc(n, nil, task)
}

// alignToSecond adjusts a delay so the retry lands on the nearest whole
// second: asynq keeps a retry's time in whole Unix seconds (it truncates),
// which alone would run it up to a second early — a sub-second delay would
// mostly run at once. Aligned, every schedule (1, 2, 4, 8, 16 s, or
// milliseconds in tests) holds to ±0.5 s plus the poll interval.
func alignToSecond(now time.Time, d time.Duration) time.Duration {
	return max(now.Add(d).Round(time.Second).Sub(now), 0)
}

// NewTask builds the asynq task for a type, with its ledger-derived ID.
func (t Table) NewTask(typ, taskID string, payload []byte, processAt time.Time) (*asynq.Task, error) {
	return t.NewTaskWithHeaders(typ, taskID, payload, processAt, nil)
}

// NewTaskWithHeaders is NewTask with asynq task headers (the trace context
// the relay carries from the outbox row to the worker).
func (t Table) NewTaskWithHeaders(typ, taskID string, payload []byte, processAt time.Time, headers map[string]string) (*asynq.Task, error) {
	s, ok := t[typ]
	if !ok {
		return nil, fmt.Errorf("tasks: unknown type %q", typ)
	}
	opts := []asynq.Option{asynq.TaskID(taskID), asynq.Queue(s.Queue), asynq.MaxRetry(s.MaxRetry)}
	if s.Timeout > 0 {
		opts = append(opts, asynq.Timeout(s.Timeout))
	}
	if s.Retention > 0 {
		opts = append(opts, asynq.Retention(s.Retention))
	}
	if !processAt.IsZero() {
		opts = append(opts, asynq.ProcessAt(processAt))
	}
	return asynq.NewTaskWithHeaders(typ, payload, headers, opts...), nil
}

// ID is a ledger-derived task ID: <type>:<number>:<generation>.
func ID(typ, number string, gen int) string {
	return fmt.Sprintf("%s:%s:%d", typ, number, gen)
}
