package chaos_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// Regression (found by the chaos run, seed 42: a group's five settle retries,
// configured "100ms,200ms,400ms,800ms,1600ms", all ran within 210 ms while
// MariaDB was down, so its whole budget was spent in well under a second).
// asynq keeps a retry's due time in whole Unix seconds — RDB.Retry scores the
// task with processAt.Unix(), truncated — so a delay can fire up to a second
// early, and a sub-second one at once: an 800 ms retry after a failure at
// x.1 s is due at x.9 s, scored x, and runs immediately. Fixed in 720fd0a
// (tasks.alignToSecond now puts every retry on the nearest whole second).
//
// A failing settle task's retry must come within the product's own
// tolerance (±0.5 s) of its configured delay, sub-second delays included.
func TestSettleRetriesWaitTheirConfiguredDelays(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr(), DB: testenv.RedisDB(t)})
	defer rdb.Close()
	table := tasks.NewTable(tasks.Config{
		ActivateTimeout: time.Second, ActivateRetryDelay: time.Second, SweepInterval: time.Second,
		RefundRetryDelays: []time.Duration{time.Second}, PayTimeout: time.Second, NotifyInterval: time.Second,
		SettleRetryDelays: []time.Duration{800 * time.Millisecond, 800 * time.Millisecond},
	})

	var mu sync.Mutex
	var attempts []time.Time
	done := make(chan struct{})
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency: 1, Queues: tasks.QueueWeights, RetryDelayFunc: table.RetryDelay,
		TaskCheckInterval: 10 * time.Millisecond, DelayedTaskCheckInterval: 10 * time.Millisecond,
		LogLevel: asynq.FatalLevel,
	})
	mux := asynq.NewServeMux()
	mux.HandleFunc(tasks.TypeGroupSettle, func(context.Context, *asynq.Task) error {
		mu.Lock()
		defer mu.Unlock()
		attempts = append(attempts, time.Now())
		if len(attempts) == 3 {
			close(done)
			return nil
		}
		return errors.New("ledger unreachable")
	})
	if err := srv.Start(mux); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()

	// Fail the first attempt early in a second, so the retry falls due
	// before the next whole second and truncation makes it due at once.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
	task, err := table.NewTask(tasks.TypeGroupSettle, tasks.ID(tasks.TypeGroupSettle, "Gretry", 1),
		tasks.Encode(tasks.GroupPayload{GroupNo: "Gretry", Gen: 1}), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	client := asynq.NewClientFromRedisClient(rdb)
	if _, err := client.Enqueue(task); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatalf("only %d attempts in 15 s", len(attempts))
	}
	mu.Lock()
	defer mu.Unlock()
	const tolerance = 500 * time.Millisecond
	for i, want := range []time.Duration{800 * time.Millisecond, 800 * time.Millisecond} {
		if got := attempts[i+1].Sub(attempts[i]); got < want-tolerance || got > want+tolerance {
			t.Errorf("settle retry %d ran %s after the failure, want %s ±%s (configured delay)", i+1, got.Round(time.Millisecond), want, tolerance)
		}
	}
}
