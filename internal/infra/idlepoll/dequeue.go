package idlepoll

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

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
