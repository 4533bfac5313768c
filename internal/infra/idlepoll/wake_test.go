package idlepoll_test

import (
	"context"
	"testing"
	"time"

	"orderflow/internal/infra/idlepoll"
	"orderflow/internal/testenv"

	"github.com/hibiken/asynq"
)

// A listening hook holds an empty round until a task is announced: at a
// check interval of 400 ms (asynq sleeps 200–600 ms after an empty round) an
// announced task runs within a few ms, and an unannounced one still runs
// (after the round's MaxWait). Stopping the listener ends a held round at once.
func TestAnnouncedTaskRunsAtOnce(t *testing.T) {
	t.Parallel()
	rdb := client(t)
	hook := idlepoll.New(idlepoll.Config{Queues: []string{"a", "b"},
		TaskCheckInterval: 400 * time.Millisecond, DelayedTaskCheckInterval: time.Second,
		WakeChannel: idlepoll.Channel(rdb), MaxWait: 2 * time.Second})
	rdb.AddHook(hook)
	stop := hook.Listen(rdb)
	got := make(chan string, 10)
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
	enq := asynq.NewClientFromRedisClient(rdb)
	held := func() {
		t.Helper()
		testenv.Eventually(t, 5*time.Second, "a round held for an announcement", func() (bool, error) {
			return hook.Waiting(), nil
		})
	}
	run := func(payload string, within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		select {
		case p := <-got:
			if p != payload {
				t.Fatalf("ran %q, want %q", p, payload)
			}
		case <-time.After(within):
			t.Fatalf("%q not run within %v", payload, within)
		}
		return time.Since(start)
	}

	for i, q := range []string{"a", "b", "a"} {
		held()
		p := "announced-" + q + string(rune('0'+i))
		if _, err := enq.Enqueue(asynq.NewTask("t", []byte(p)), asynq.Queue(q)); err != nil {
			t.Fatal(err)
		}
		idlepoll.Announce(context.Background(), rdb)
		took := run(p, 5*time.Second)
		t.Logf("announced task on queue %s: run %v after the announcement", q, took)
		if took > 150*time.Millisecond {
			t.Errorf("announced task ran %v after its announcement, want ≤ 150ms (asynq's own poll sleeps ≥ 200ms)", took)
		}
	}

	held()
	if _, err := enq.Enqueue(asynq.NewTask("t", []byte("unannounced")), asynq.Queue("b")); err != nil {
		t.Fatal(err)
	}
	t.Logf("unannounced task: run %v after enqueue", run("unannounced", 5*time.Second))

	held()
	start := time.Now()
	stop()
	testenv.Eventually(t, time.Second, "the held round ended", func() (bool, error) { return !hook.Waiting(), nil })
	t.Logf("stop ended the held round in %v", time.Since(start))
}
