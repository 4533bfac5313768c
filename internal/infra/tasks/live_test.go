package tasks_test

import (
	"context"
	"testing"
	"time"

	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// LiveMany reads asynq's task hash itself (one pipelined round trip); it
// must agree with asynq's own Inspector in every state, or a layout change
// in asynq would make the sweep re-queue live tasks or miss dead ones.
func TestLiveManyMatchesInspector(t *testing.T) {
	t.Parallel()
	cfg := testenv.Config(t)
	rdb := redis.NewClient(&redis.Options{Addr: cfg.RedisAddr, DB: cfg.RedisDB})
	defer rdb.Close()
	client, insp := asynq.NewClientFromRedisClient(rdb), asynq.NewInspectorFromRedisClient(rdb)
	table := tasks.NewTable(tasks.Config{ActivateRetryDelay: time.Second})
	ctx := context.Background()
	typ := tasks.TypeOrderClose
	enqueue := func(id string, at time.Time) {
		task, err := table.NewTask(typ, id, nil, at)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.EnqueueContext(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	enqueue("pending", time.Time{})
	enqueue("scheduled", time.Now().Add(time.Hour))
	enqueue("archived", time.Now().Add(time.Hour))
	if err := insp.ArchiveTask(tasks.QueueClose, "archived"); err != nil {
		t.Fatal(err)
	}
	ids := []string{"pending", "scheduled", "archived", "missing"}
	got, err := table.LiveMany(ctx, rdb, typ, ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		want, err := table.Live(insp, typ, id)
		if err != nil {
			t.Fatal(err)
		}
		if got[id] != want {
			t.Errorf("%s: LiveMany %v, Inspector %v", id, got[id], want)
		}
	}
	if !got["pending"] || !got["scheduled"] || got["archived"] || got["missing"] {
		t.Errorf("LiveMany = %v, want pending and scheduled only", got)
	}
}
