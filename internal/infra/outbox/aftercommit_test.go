package outbox_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"orderflow/internal/infra/idlepoll"
	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// trips records each Redis round trip as the names of its commands.
type trips struct {
	mu  sync.Mutex
	got []string
}

func (r *trips) add(cmds ...redis.Cmder) {
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c.Name()
	}
	r.mu.Lock()
	r.got = append(r.got, strings.Join(names, " "))
	r.mu.Unlock()
}

func (r *trips) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.got
	r.got = nil
	return got
}

func (r *trips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (r *trips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { r.add(cmd); return next(ctx, cmd) }
}
func (r *trips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { r.add(cmds...); return next(ctx, cmds) }
}

// TestAfterCommitIsTwoRoundTrips: a committed transaction that moved an
// order and wrote a task due now costs Redis two round trips: the enqueue,
// then the order's cache DELs and the workers' wake-up in one pipeline —
// the wake-up after the enqueue, so a woken worker finds the task.
func TestAfterCommitIsTwoRoundTrips(t *testing.T) {
	t.Parallel()
	sc, err := svc.New(testenv.Config(t), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sc.Close() })
	sc.NewUseCases() // installs the after-commit work
	ctx := context.Background()
	rec := &trips{}
	sc.Redis.AddHook(rec)
	sub := sc.Redis.Subscribe(ctx, idlepoll.Channel(sc.Redis))
	t.Cleanup(func() { _ = sub.Close() })
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	woken := sub.Channel()

	for i := range 2 { // the first may load asynq's script (EVALSHA, then EVAL)
		now := time.Now().UTC().Truncate(time.Millisecond)
		o := &model.Order{OrderNo: "ACT" + string(rune('A'+i)) + now.Format("150405.000"), UserID: 1, ProductID: 1, Kind: model.KindRecharge,
			Quantity: 1, AmountCents: 100, Status: model.OrderPending, CreatedAt: now, UpdatedAt: now, ExpireAt: now.Add(time.Hour)}
		if err := sc.Store.InsertOrder(ctx, o); err != nil {
			t.Fatal(err)
		}
		rec.take()
		err := sc.Store.InTx(ctx, func(tx *model.Store) error {
			if err := tx.MoveOrderOrAbortLater(ctx, o.ID, o.OrderNo, model.OrderMove{From: model.OrderPending, To: model.OrderPaid, Reason: "test", At: now}); err != nil {
				return err
			}
			return tx.InsertOutboxLater(ctx, model.TaskRow(tasks.ID(tasks.TypeOrderActivate, o.OrderNo, 1), tasks.TypeOrderActivate, []byte(`{}`), now, now))
		})
		if err != nil {
			t.Fatal(err)
		}
		got := rec.take()
		testenv.Receive(t, woken, 5*time.Second, "the wake-up announced")
		if i == 0 {
			continue
		}
		if diff := cmp.Diff([]string{"evalsha", "del del publish"}, got); diff != "" {
			t.Errorf("Redis round trips after the commit (-want +got):\n%s", diff)
		}
	}
}
