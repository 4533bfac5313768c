package idlepoll

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

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
