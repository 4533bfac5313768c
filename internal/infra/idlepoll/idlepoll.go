// Package idlepoll makes an idle asynq worker cheap for Redis. asynq polls:
// its processor runs the dequeue script once per queue every round (a
// round every 10–30 ms when all are empty) and its forwarder runs the
// forward script once per scheduled and retry set every round. A go-redis
// hook on the worker's client answers those calls from one read-only check
// of all the queues per round, and, once the worker has been idle for a
// while, reuses an "all empty" answer for a few rounds; while a queue keeps
// yielding tasks, one check answers the next rounds too (took), so a busy
// worker does not pay a check before every dequeue. asynq's scripts
// still do every move: the hook only answers "nothing here" when its check
// (read an instant before) said so — a task that arrives after the check
// is found by the next round, as it would be after asynq's own check.
package idlepoll

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"orderflow/internal/infra/clock"

	"github.com/redis/go-redis/v9"
)

// Config is what the hook knows of the worker it serves.
type Config struct {
	// Queues are the worker's asynq queue names (calls naming another pass
	// through), in the order a call woken by an announcement looks for a
	// task in them: the most important first.
	Queues []string
	// TaskCheckInterval and DelayedTaskCheckInterval are the asynq
	// server's: an answer stays fresh for a quarter of the first (a
	// dequeue round) and half of the second (a forward round).
	TaskCheckInterval        time.Duration
	DelayedTaskCheckInterval time.Duration
	// IdleAfter is how long without a task dequeued or forwarded before
	// the worker counts as idle (default 1 s).
	IdleAfter time.Duration
	// IdleHold is how long an idle worker's "all queues empty" answer is
	// reused across rounds: the most a task arriving at an idle worker
	// waits for it beyond asynq's own poll (default 4 × TaskCheckInterval,
	// at most 100 ms).
	IdleHold time.Duration
	// WakeChannel is where the hook's forward rounds announce the tasks
	// they moved (Channel of the worker's client; none when empty).
	WakeChannel string
	// MaxWait is how long an empty round waits for an announcement while
	// the hook listens (default 500 ms): the most a task that comes
	// unannounced waits beyond asynq's own poll. Every path of ours that
	// puts a task due now in a queue announces it; an asynqmon "run now" or
	// a lost announcement does not.
	MaxWait time.Duration
	// Clock is the time source (the wall clock when nil).
	Clock clock.Clock
}

// Hook is a redis.Hook for the worker's client. Install it only on a
// standalone or Sentinel client: on a Cluster the queues live in different
// slots, so one script cannot read them all.
type Hook struct {
	clock     clock.Clock
	readyKeys []string       // pending, paused per queue, for readyCheck
	dueKeys   []string       // scheduled, retry per queue, for dueCheck
	queue     map[string]int // name → index in queues
	queues    []string       // in the order a woken call looks for a task (wait)
	dueIndex  map[string]int

	dequeueFresh, forwardFresh time.Duration
	carryFor                   time.Duration // a check answers rounds after a take this long (took)
	idleAfter, idleHold        time.Duration
	channel                    string
	maxWait                    time.Duration
	wake                       chan struct{} // an announcement came (wake.go)
	waiting                    atomic.Bool   // a round waits for one now

	mu        sync.Mutex
	listening bool      // the wake channel's subscription stands
	lastWork  time.Time // a task dequeued or forwarded
	ready     verdict   // the last readyCheck
	due       verdict   // the last dueCheck
	dueUnix   int64     // the second the last dueCheck asked about
}

// verdict is one check's answer, used once per queue (or set) of a round.
type verdict struct {
	at      time.Time
	flags   []bool
	used    []bool
	carried int // rounds after a take it has answered (took)
}

func (v *verdict) set(at time.Time, flags []bool) {
	*v = verdict{at: at, flags: flags, used: make([]bool, len(flags))}
}

func (v *verdict) clear() { *v = verdict{} }

func (v *verdict) none() bool { return none(v.flags) }

func none(flags []bool) bool {
	for _, f := range flags {
		if f {
			return false
		}
	}
	return true
}

// New returns the hook for a worker's queues.
func New(c Config) *Hook {
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.IdleAfter <= 0 {
		c.IdleAfter = time.Second
	}
	if c.IdleHold <= 0 {
		c.IdleHold = min(4*c.TaskCheckInterval, 100*time.Millisecond)
	}
	if c.MaxWait <= 0 {
		c.MaxWait = 500 * time.Millisecond
	}
	h := &Hook{
		clock: c.Clock, queue: map[string]int{}, dueIndex: map[string]int{},
		dequeueFresh: c.TaskCheckInterval / 4, forwardFresh: c.DelayedTaskCheckInterval / 2, carryFor: c.TaskCheckInterval,
		idleAfter: c.IdleAfter, idleHold: c.IdleHold, lastWork: c.Clock.Now(),
		channel: c.WakeChannel, maxWait: c.MaxWait, wake: make(chan struct{}, 1),
	}
	h.queues = c.Queues
	for i, q := range c.Queues {
		h.queue[q] = i
		h.readyKeys = append(h.readyKeys, key(q, "pending"), key(q, "paused"))
		for _, set := range []string{"scheduled", "retry"} {
			h.dueIndex[key(q, set)] = len(h.dueKeys)
			h.dueKeys = append(h.dueKeys, key(q, set))
		}
	}
	return h
}

// DialHook passes dials through.
func (h *Hook) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessPipelineHook passes pipelines through: asynq polls with single calls.
func (h *Hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// ProcessHook answers asynq's dequeue and forward calls when a check says
// there is nothing for them, and passes every other command through.
func (h *Hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		call := recognise(cmd)
		switch {
		case call.kind == dequeueCall && h.has(call.queue):
			return h.dequeue(ctx, next, cmd, call)
		case call.kind == forwardCall && h.has(call.queue):
			return h.forward(ctx, next, cmd, call)
		}
		return next(ctx, cmd)
	}
}

func (h *Hook) has(queue string) bool { _, ok := h.queue[queue]; return ok }

// worked notes a task taken or forwarded: the worker is not idle, and the
// last ready answer is stale.
func (h *Hook) worked(now time.Time) {
	h.mu.Lock()
	h.lastWork = now
	h.ready.clear()
	h.mu.Unlock()
}

var _ redis.Hook = (*Hook)(nil)
