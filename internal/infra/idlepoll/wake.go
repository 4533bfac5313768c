package idlepoll

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Wake-ups. asynq polls: after a round that finds every queue empty its
// processor sleeps 10–30 ms (at a 20 ms check interval) before it looks
// again, and a task enqueued meanwhile waits for that sleep. So whoever
// enqueues a task due now announces it (Announce: one PUBLISH), and a
// listening hook (Listen) holds the dequeue call that found every queue
// empty until an announcement comes or MaxWait runs out, then checks again
// and takes the task (wait): the worker takes it as soon as it is
// announced. An announcement that is lost (the subscription down, a task
// asynq enqueued itself) costs latency only: the round ends after MaxWait,
// as a poll.

// Channel is the pub/sub channel announcing tasks on rdb's database
// (pub/sub is not per database, so the name carries it).
func Channel(rdb redis.UniversalClient) string {
	db := 0
	if c, ok := rdb.(*redis.Client); ok {
		db = c.Options().DB
	}
	return "orderflow:wake:" + strconv.Itoa(db)
}

// Announce tells the workers on rdb that a task due now was enqueued. Best
// effort, and nothing on a Cluster, where no hook listens.
func Announce(ctx context.Context, rdb redis.UniversalClient) {
	AnnounceIn(ctx, rdb, rdb)
}

// AnnounceIn is Announce as one command of a pipeline (or any cmdable) on
// rdb, to share a round trip with other work.
func AnnounceIn(ctx context.Context, p redis.Cmdable, rdb redis.UniversalClient) {
	if _, ok := rdb.(*redis.ClusterClient); ok {
		return
	}
	_ = p.Publish(ctx, Channel(rdb), "1").Err()
}

// Listen subscribes the hook to rdb's wake channel and returns the function
// that ends it. While the subscription stands, empty rounds wait for
// announcements; while it is down (Redis lost), they end at once, as
// without the hook's wake-ups, and the subscription is retried.
func (h *Hook) Listen(rdb *redis.Client) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ps := rdb.Subscribe(ctx, Channel(rdb))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			msg, err := ps.Receive(ctx)
			switch m := msg.(type) {
			case *redis.Subscription:
				h.setListening(m.Kind == "subscribe")
			case *redis.Message:
				h.wakeUp()
			}
			if err != nil {
				h.setListening(false)
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
	}()
	return func() {
		cancel()
		_ = ps.Close() // unblocks Receive
		<-done
		h.setListening(false)
		h.wakeUp() // a round waiting now ends: the server is stopping
	}
}

func (h *Hook) setListening(on bool) {
	h.mu.Lock()
	h.listening = on
	h.mu.Unlock()
}

// wakeUp drops the last ready answer (it may say "empty" for a while when
// idle) and ends a round waiting for an announcement.
func (h *Hook) wakeUp() {
	h.mu.Lock()
	h.ready.clear()
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// wait holds a dequeue call that found every queue empty until an
// announcement (waitWake), then checks again and takes a task:
// with asynq's script on the call's own queue if it has one, else on the
// first of the others that has (a queue this round already asked would
// otherwise wait for asynq's sleep). Nothing came, or nothing was found:
// redis.Nil, and the round goes on as asynq's.
func (h *Hook) wait(ctx context.Context, next redis.ProcessHook, cmd redis.Cmder, call asynqCall) error {
	h.mu.Lock()
	listening := h.listening
	h.mu.Unlock()
	if !listening || !h.waitWake(ctx) {
		cmd.SetErr(redis.Nil)
		return redis.Nil
	}
	i := h.queue[call.queue]
	flags, err := run(ctx, next, readyCheck, 2, h.readyKeys)
	if err != nil {
		return next(ctx, cmd) // the fault is asynq's to meet (dequeue)
	}
	h.setReady(i, flags)
	j := i
	if !flags[i] {
		j = slices.Index(flags, true)
	}
	c, isCmd := cmd.(*redis.Cmd)
	switch {
	case j < 0 || (j != i && !isCmd):
		cmd.SetErr(redis.Nil)
		return redis.Nil
	case j == i:
		err = next(ctx, cmd)
	default:
		// asynq's script on queue j, its answer given as this call's: the
		// task message names its queue, and asynq acts on that.
		other := redis.NewCmd(ctx, dequeueArgs(h.queues[j], call.lease)...)
		if err = next(ctx, other); err == nil {
			err = other.Err()
		}
		if err != nil && !errors.Is(err, redis.Nil) {
			err = redis.Nil // NOSCRIPT after a flush, a fault: asynq's next round meets it
		}
		c.SetVal(other.Val())
		c.SetErr(err)
	}
	if err == nil {
		h.took(h.clock.Now(), j)
	}
	return err
}

// waitWake holds an empty round until an announcement or maxWait; it
// reports whether one came.
func (h *Hook) waitWake(ctx context.Context) bool {
	t := time.NewTimer(h.maxWait)
	defer t.Stop()
	h.waiting.Store(true)
	defer h.waiting.Store(false)
	select {
	case <-h.wake:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// drainWake forgets an announcement that came before a check: the check sees its task.
func (h *Hook) drainWake() {
	select {
	case <-h.wake:
	default:
	}
}

// announce is the forwarder's announcement: tasks it moved into pending
// are due now. This process's processor is woken directly, others by the
// PUBLISH (sent through the rest of the chain, as the checks are).
func (h *Hook) announce(ctx context.Context, next redis.ProcessHook) {
	h.wakeUp()
	if h.channel != "" {
		_ = next(ctx, redis.NewIntCmd(ctx, "publish", h.channel, "1"))
	}
}
