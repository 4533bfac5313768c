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
	"errors"
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

// dequeue answers one queue's dequeue call: redis.Nil when the round's
// check found nothing to take there, else asynq's script. A call that
// learns that every queue is empty — its own check found them so, or its
// script found its queue empty and the check the others — waits for an
// announcement before it answers (wait).
func (h *Hook) dequeue(ctx context.Context, next redis.ProcessHook, cmd redis.Cmder, call asynqCall) error {
	i := h.queue[call.queue]
	now := h.clock.Now()
	h.mu.Lock()
	take, known := h.readyAnswer(now, i)
	h.mu.Unlock()
	if !known {
		h.drainWake() // the check sees the task of an announcement made before it
		flags, err := run(ctx, next, readyCheck, 2, h.readyKeys)
		if err != nil {
			// asynq's own call meets the fault and reports it (an outage
			// costs a failed check too: rare, and a check that fails alone
			// must never stop the polling).
			return next(ctx, cmd)
		}
		h.setReady(i, flags)
		if none(flags) {
			return h.wait(ctx, next, cmd, call)
		}
		take = flags[i]
	}
	if !take {
		cmd.SetErr(redis.Nil)
		return redis.Nil
	}
	err := next(ctx, cmd)
	switch {
	case err == nil:
		h.took(h.clock.Now(), i)
	case errors.Is(err, redis.Nil):
		h.mu.Lock()
		if i < len(h.ready.flags) {
			h.ready.flags[i] = false // the script found it empty
		}
		allEmpty := h.ready.none()
		h.mu.Unlock()
		if allEmpty {
			return h.wait(ctx, next, cmd, call)
		}
	}
	return err
}

// setReady records a ready check made for queue i's call.
func (h *Hook) setReady(i int, flags []bool) {
	h.mu.Lock()
	h.ready.set(h.clock.Now(), flags)
	h.ready.used[i] = true
	h.mu.Unlock()
}

// maxCarry bounds the rounds one check answers after takes (took).
const maxCarry = 16

// took notes a task taken from queue i. The worker is not idle, and the
// next round answers from the same check — queue i as ready (it just
// yielded a task; asynq's script finds out whether that was the last), the
// others as the check found them — while the check is younger than a task
// check interval and has answered fewer than maxCarry rounds: a busy worker
// pays one call a task to dequeue, not a check and a call. A task arriving
// meanwhile in a queue the check found empty waits at most one more check
// interval, as it would for asynq's own poll.
func (h *Hook) took(now time.Time, i int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastWork = now
	v := &h.ready
	if v.at.IsZero() || now.Sub(v.at) >= h.carryFor || v.carried >= maxCarry {
		v.clear()
		return
	}
	v.carried++
	v.flags[i] = true
	clear(v.used)
}

// readyAnswer is the last readyCheck's answer for queue i, if it still
// holds: in the same round (fresh, queue not yet asked), or, while the
// worker is idle and the check found every queue empty, for IdleHold.
func (h *Hook) readyAnswer(now time.Time, i int) (take, known bool) {
	v := &h.ready
	switch {
	case v.at.IsZero():
		return false, false
	case now.Sub(h.lastWork) >= h.idleAfter && v.none() && now.Sub(v.at) < h.idleHold:
		return false, true
	case now.Sub(v.at) < h.freshFor(v) && !v.used[i]:
		v.used[i] = true
		return v.flags[i], true
	}
	return false, false
}

// freshFor is how long v answers a round: a check answers its own round
// within a quarter of the check interval, and rounds after takes within
// one (took).
func (h *Hook) freshFor(v *verdict) time.Duration {
	if v.carried > 0 {
		return h.carryFor
	}
	return h.dequeueFresh
}

// forward answers one set's forward call: 0 moved when the round's check
// found nothing due there, else asynq's script.
func (h *Hook) forward(ctx context.Context, next redis.ProcessHook, cmd redis.Cmder, call asynqCall) error {
	c, ok := cmd.(*redis.Cmd)
	if !ok {
		return next(ctx, cmd)
	}
	i := h.dueIndex[call.key]
	now := h.clock.Now()
	h.mu.Lock()
	due, known := h.dueAnswer(now, i, call.unix)
	h.mu.Unlock()
	if !known {
		flags, err := run(ctx, next, dueCheck, 1, h.dueKeys, call.unix)
		if err != nil {
			return next(ctx, cmd)
		}
		h.mu.Lock()
		h.due.set(now, flags)
		h.dueUnix = call.unix
		h.due.used[i] = !flags[i]
		h.mu.Unlock()
		due = flags[i]
	}
	if !due {
		c.SetVal(int64(0))
		return nil
	}
	err := next(ctx, cmd)
	if n, _ := asInt(c.Val()); err == nil && n > 0 {
		h.worked(h.clock.Now()) // tasks just landed in pending
		h.announce(ctx, next)
	}
	return err
}

// dueAnswer is the last dueCheck's answer for set i, if it still holds:
// in the same round (fresh, same second, set not yet answered). A due set
// is passed through until asynq's loop over it ends, so it is never marked.
func (h *Hook) dueAnswer(now time.Time, i int, unix int64) (due, known bool) {
	v := &h.due
	if v.at.IsZero() || now.Sub(v.at) >= h.forwardFresh || h.dueUnix != unix || v.used[i] {
		return false, false
	}
	v.used[i] = !v.flags[i]
	return v.flags[i], true
}

// worked notes a task taken or forwarded: the worker is not idle, and the
// last ready answer is stale.
func (h *Hook) worked(now time.Time) {
	h.mu.Lock()
	h.lastWork = now
	h.ready.clear()
	h.mu.Unlock()
}

var _ redis.Hook = (*Hook)(nil)
