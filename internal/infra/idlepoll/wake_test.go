package idlepoll_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"orderflow/internal/infra/idlepoll"
	"orderflow/internal/testenv"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// slowPollServer starts an asynq server on rdb for queues a (weight 2) and
// b whose own poll sleeps 200–600 ms after an empty round (400 ms check
// interval), with the idle hook (not yet listening; 2 s MaxWait) and then
// inner (hooks that see what the idle hook passes on) on rdb. Each task's
// payload goes to got.
func slowPollServer(t *testing.T, rdb *redis.Client, inner ...redis.Hook) (hook *idlepoll.Hook, got chan string) {
	t.Helper()
	hook = idlepoll.New(idlepoll.Config{Queues: []string{"a", "b"},
		TaskCheckInterval: 400 * time.Millisecond, DelayedTaskCheckInterval: time.Second,
		WakeChannel: idlepoll.Channel(rdb), MaxWait: 2 * time.Second})
	rdb.AddHook(hook)
	for _, h := range inner {
		rdb.AddHook(h)
	}
	got = make(chan string, 10)
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Queues: map[string]int{"a": 2, "b": 1}, TaskCheckInterval: 400 * time.Millisecond,
		DelayedTaskCheckInterval: time.Second, LogLevel: asynq.FatalLevel,
	})
	if err := srv.Start(asynq.HandlerFunc(func(_ context.Context, task *asynq.Task) error {
		got <- string(task.Payload())
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return hook, got
}

// ran waits for the next task to run, which must be payload's, and returns
// how long that took.
func ran(t *testing.T, got <-chan string, payload string, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	if p := testenv.Receive(t, got, within, strconv.Quote(payload)+" to run"); p != payload {
		t.Fatalf("ran %q, want %q", p, payload)
	}
	return time.Since(start)
}

// A listening hook holds an empty round until a task is announced: at a
// check interval of 400 ms (asynq sleeps 200–600 ms after an empty round) an
// announced task runs within a few ms, and an unannounced one still runs
// (after the round's MaxWait). Stopping the listener ends a held round at once.
func TestAnnouncedTaskRunsAtOnce(t *testing.T) {
	t.Parallel()
	rdb := client(t)
	hook, got := slowPollServer(t, rdb)
	stop := hook.Listen(rdb)
	enq := asynq.NewClientFromRedisClient(rdb)
	held := func() {
		t.Helper()
		testenv.Eventually(t, 5*time.Second, "a round held for an announcement", func() (bool, error) {
			return hook.Waiting(), nil
		})
	}

	for i, q := range []string{"a", "b", "a"} {
		held()
		p := "announced-" + q + string(rune('0'+i))
		if _, err := enq.Enqueue(asynq.NewTask("t", []byte(p)), asynq.Queue(q)); err != nil {
			t.Fatal(err)
		}
		idlepoll.Announce(context.Background(), rdb)
		took := ran(t, got, p, 5*time.Second)
		t.Logf("announced task on queue %s: run %v after the announcement", q, took)
		if took > 150*time.Millisecond {
			t.Errorf("announced task ran %v after its announcement, want ≤ 150ms (asynq's own poll sleeps ≥ 200ms)", took)
		}
	}

	held()
	if _, err := enq.Enqueue(asynq.NewTask("t", []byte("unannounced")), asynq.Queue("b")); err != nil {
		t.Fatal(err)
	}
	t.Logf("unannounced task: run %v after enqueue", ran(t, got, "unannounced", 5*time.Second))

	held()
	start := time.Now()
	stop()
	testenv.Eventually(t, time.Second, "the held round ended", func() (bool, error) { return !hook.Waiting(), nil })
	t.Logf("stop ended the held round in %v", time.Since(start))
}

// emptied is a hook, added after idlepoll's, that reports each time asynq's
// dequeue script (passed through by the hook) finds its queue empty.
type emptied chan struct{}

func (e emptied) DialHook(next redis.DialHook) redis.DialHook { return next }
func (e emptied) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (e emptied) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if errors.Is(err, redis.Nil) && strings.HasPrefix(idlepoll.Recognise(cmd), "dequeue ") {
			select {
			case e <- struct{}{}:
			default:
			}
		}
		return err
	}
}

// After a take the next round asks the taken queue again (asynq's script
// finds out whether that was its last task); when it was, the round ends
// empty and asynq sleeps 200–600 ms here. A task announced during that
// sleep — in the same queue or in one the round had already asked — still
// runs within a few ms: the round that found every queue empty waits for
// the announcement and takes the task from whichever queue has it.
func TestTaskAnnouncedJustAfterATakeRunsAtOnce(t *testing.T) {
	t.Parallel()
	rdb := client(t)
	empty := make(emptied, 1)
	hook, got := slowPollServer(t, rdb, empty)
	t.Cleanup(hook.Listen(rdb))
	enq := asynq.NewClientFromRedisClient(rdb)
	announce := func(q, payload string) time.Time {
		t.Helper()
		if _, err := enq.Enqueue(asynq.NewTask("t", []byte(payload)), asynq.Queue(q)); err != nil {
			t.Fatal(err)
		}
		idlepoll.Announce(context.Background(), rdb)
		return time.Now()
	}

	for i, qs := range [][2]string{{"a", "a"}, {"a", "b"}, {"b", "a"}, {"b", "b"}, {"a", "b"}, {"b", "a"}} {
		testenv.Eventually(t, 5*time.Second, "an idle round held", func() (bool, error) { return hook.Waiting(), nil })
		select {
		case <-empty:
		default:
		}
		first, second := fmt.Sprintf("first-%d", i), fmt.Sprintf("second-%d", i)
		announce(qs[0], first)
		ran(t, got, first, 5*time.Second)
		select {
		case <-empty: // the round after the take found queue qs[0] empty
		case <-time.After(5 * time.Second):
			t.Fatal("no round after the take asked the taken queue")
		}
		at := announce(qs[1], second)
		ran(t, got, second, 5*time.Second)
		took := time.Since(at)
		t.Logf("task on %s announced after a take from %s: run %v after the announcement", qs[1], qs[0], took)
		if took > 150*time.Millisecond {
			t.Errorf("task on %s announced after a take from %s ran %v after its announcement, want ≤ 150ms (asynq's sleep is ≥ 200ms)", qs[1], qs[0], took)
		}
	}
}
