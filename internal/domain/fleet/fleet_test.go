package fleet_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"orderflow/internal/domain/fleet"
	"orderflow/internal/infra/clock"
	"orderflow/internal/testenv"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// claims records the takeovers a watcher asks for; holders is what the
// ledger would answer for "who holds claims".
type claims struct {
	mu       sync.Mutex
	holders  []string
	released []string
}

func (c *claims) ReleaseClaimsOf(_ context.Context, worker string) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.released = append(c.released, worker)
	return 1, nil
}

func (c *claims) ClaimHolders(context.Context) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.holders), nil
}

func (c *claims) took() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.released)
}

type bundle struct {
	rdb   *redis.Client
	clock *clock.Fake
	cl    *claims
}

func setup(t *testing.T) *bundle {
	t.Helper()
	rdb := testenv.Redis(t)
	return &bundle{rdb: rdb, clock: clock.NewFake(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)), cl: &claims{}}
}

func (b *bundle) watcher(self string) *fleet.Watcher {
	return fleet.New(fleet.Config{Self: self, Lease: 15 * time.Second, Queues: []string{"critical"}, Redis: b.rdb, Claims: b.cl, Clock: b.clock, Log: zap.NewNop()})
}

// A worker that stops beating is taken over once its lease has passed, not
// before, and only once; one that beats again is never dropped.
func TestLapsedWorkerTakenOverOnceAfterItsLease(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	dead, live := b.watcher("dead"), b.watcher("live")
	dead.Step(ctx)
	live.Step(ctx)

	b.clock.Advance(15 * time.Second) // "dead" last beat exactly a lease ago
	live.Step(ctx)
	if got := b.cl.took(); len(got) != 0 {
		t.Fatalf("taken over at the lease's end, before it lapsed: %v", got)
	}
	b.clock.Advance(time.Millisecond)
	live.Step(ctx)
	if got := b.cl.took(); !slices.Equal(got, []string{"dead"}) {
		t.Fatalf("after the lease: took over %v, want [dead]", got)
	}
	if n := b.rdb.ZCard(ctx, fleet.RegistryKey).Val(); n != 1 {
		t.Errorf("registry holds %d workers after the takeover, want 1 (live)", n)
	}
	b.clock.Advance(time.Second)
	live.Step(ctx)
	if got := b.cl.took(); len(got) != 1 {
		t.Errorf("taken over again: %v", got)
	}
}

// A frozen worker that beats again after it was found lapsed, but before
// the takeover dropped it, stays in the registry.
func TestForgetKeepsAWorkerThatBeatAgain(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	now := b.clock.Now()
	if _, err := fleet.Beat(ctx, b.rdb, "frozen", now, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	cutoff := now.Add(time.Second)
	if _, err := fleet.Beat(ctx, b.rdb, "frozen", now.Add(20*time.Second), 15*time.Second); err != nil { // it woke up
		t.Fatal(err)
	}
	if err := fleet.Forget(ctx, b.rdb, "frozen", cutoff); err != nil {
		t.Fatal(err)
	}
	if _, err := b.rdb.ZScore(ctx, fleet.RegistryKey, "frozen").Result(); err != nil {
		t.Errorf("a worker that beat after the cutoff was dropped: %v", err)
	}
}

// After Redis lost the registry, a claim holder it does not list is taken
// over only once it has stayed unlisted for a whole lease; a holder that
// beats again meanwhile is left alone.
func TestUnlistedHolderTakenOverAfterALease(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	b.cl.holders = []string{"gone", "back"}
	w := b.watcher("survivor")
	w.Step(ctx) // both unlisted: noted
	b.clock.Advance(10 * time.Second)
	if _, err := fleet.Beat(ctx, b.rdb, "back", b.clock.Now(), 15*time.Second); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(5 * time.Second)
	w.Step(ctx)
	if got := b.cl.took(); !slices.Equal(got, []string{"gone"}) {
		t.Fatalf("took over %v, want [gone] (back beat again)", got)
	}
}

// A task asynq holds for a worker whose lease stopped being extended goes
// back to pending, where asynq runs it; a task whose lease is fresh stays.
// The keys are asynq's own: the tasks are enqueued by asynq's client and
// the pending one is run by asynq's server.
func TestOrphanedTaskBackInItsQueue(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	opt := asynq.RedisClientOpt{Addr: testenv.RedisAddr(), DB: b.rdb.Options().DB}
	client := asynq.NewClient(opt)
	defer client.Close()
	for _, id := range []string{"orphan", "fresh"} {
		if _, err := client.Enqueue(asynq.NewTask("test:noop", nil), asynq.TaskID(id), asynq.Queue("critical")); err != nil {
			t.Fatal(err)
		}
	}
	// Taken by a worker, as asynq's dequeue does: pending → active with a
	// lease. The orphan's lease was last extended 16 s ago; the fresh one's
	// now.
	now := time.Now()
	for id, extended := range map[string]time.Time{"orphan": now.Add(-16 * time.Second), "fresh": now} {
		p := b.rdb.TxPipeline()
		p.LRem(ctx, "asynq:{critical}:pending", 0, id)
		p.LPush(ctx, "asynq:{critical}:active", id)
		p.ZAdd(ctx, "asynq:{critical}:lease", redis.Z{Score: float64(extended.Add(fleet.AsynqLease).Unix()), Member: id})
		p.HSet(ctx, "asynq:{critical}:t:"+id, "state", "active")
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	moved, err := fleet.RequeueOrphans(ctx, b.rdb, []string{"critical"}, now, 15*time.Second)
	if err != nil || !slices.Equal(moved, []string{"orphan"}) {
		t.Fatalf("requeueOrphans = %v, %v; want [orphan]", moved, err)
	}
	insp := asynq.NewInspector(opt)
	defer insp.Close()
	for id, want := range map[string]asynq.TaskState{"orphan": asynq.TaskStatePending, "fresh": asynq.TaskStateActive} {
		info, err := insp.GetTaskInfo("critical", id)
		if err != nil || info.State != want {
			t.Errorf("task %s: %v, %v; want %v", id, info, err, want)
		}
	}
	ran := make(chan string, 2)
	srv := asynq.NewServer(opt, asynq.Config{Queues: map[string]int{"critical": 1}, LogLevel: asynq.FatalLevel})
	if err := srv.Start(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		ran <- id
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	if id := testenv.Receive(t, ran, 10*time.Second, "asynq to run the re-queued task"); id != "orphan" {
		t.Errorf("asynq ran %s, want orphan", id)
	}
}
