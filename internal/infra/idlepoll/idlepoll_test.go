package idlepoll_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"orderflow/internal/infra/idlepoll"
	"orderflow/internal/testenv"

	"github.com/google/go-cmp/cmp"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// recorder is a hook that notes every command and what idlepoll takes it for.
type recorder struct {
	mu    sync.Mutex
	seen  map[string]bool // idlepoll.Recognise's names
	polls map[string]bool // asynq's polling calls as seen on the wire ("EVALSHA asynq:{a}:pending")
	total atomic.Int64
}

func newRecorder() *recorder { return &recorder{seen: map[string]bool{}, polls: map[string]bool{}} }

func (r *recorder) DialHook(next redis.DialHook) redis.DialHook { return next }
func (r *recorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.total.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}
func (r *recorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.total.Add(1)
		args := cmd.Args()
		r.mu.Lock()
		if name := idlepoll.Recognise(cmd); name != "" {
			r.seen[name] = true
		}
		if len(args) > 3 && strings.HasPrefix(cmd.Name(), "eval") {
			if k := fmt.Sprint(args[3]); strings.HasSuffix(k, ":pending") || strings.HasSuffix(k, ":scheduled") || strings.HasSuffix(k, ":retry") {
				r.polls[strings.ToUpper(cmd.Name())+" "+k] = true
			}
		}
		r.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (r *recorder) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for k := range r.seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// client is a client on the test's own Redis DB.
func client(t *testing.T) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr(), DB: testenv.RedisDB(t)})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// server starts an asynq server on rdb for queues a (weight 2) and b,
// handing every task's payload to got.
func server(t *testing.T, rdb *redis.Client, got chan<- string) {
	t.Helper()
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Queues:                   map[string]int{"a": 2, "b": 1},
		TaskCheckInterval:        20 * time.Millisecond,
		DelayedTaskCheckInterval: 50 * time.Millisecond,
		LogLevel:                 asynq.FatalLevel,
	})
	err := srv.Start(asynq.HandlerFunc(func(_ context.Context, task *asynq.Task) error {
		got <- string(task.Payload())
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
}

// Pins the recognised shapes to the asynq in go.mod: a real server's
// dequeue and forward calls must all be taken for what they are. An asynq
// upgrade that changed either script or its keys fails here (the hook
// would pass them through: correct, but idle workers poll as before).
func TestAsynqPollingCallsAreRecognised(t *testing.T) {
	t.Parallel()
	rdb := client(t)
	rec := newRecorder()
	rdb.AddHook(rec)
	server(t, rdb, make(chan string, 1))
	want := []string{
		"dequeue a", "dequeue b",
		"forward asynq:{a}:retry", "forward asynq:{a}:scheduled",
		"forward asynq:{b}:retry", "forward asynq:{b}:scheduled",
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && len(rec.names()) < len(want) {
		time.Sleep(20 * time.Millisecond)
	}
	if diff := cmp.Diff(want, rec.names()); diff != "" {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		t.Fatalf("asynq's polling calls recognised (-want +got):\n%s\nasynq's polling calls seen: %v\n"+
			"(did asynq change its dequeue or forward script? update dequeueSHA/forwardSHA and the shapes in shapes.go)", diff, rec.polls)
	}
}

// Calls that only look like asynq's pass through.
func TestLookalikesPassThrough(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dq := []any{"asynq:{a}:pending", "asynq:{a}:paused", "asynq:{a}:active", "asynq:{a}:lease", int64(1), "asynq:{a}:t:"}
	for _, tc := range []struct {
		name string
		args []any
		want string
	}{
		{"asynq's dequeue", append([]any{"evalsha", "a8153319360adc71cdc370107f8ab9786f204765", 4}, dq...), "dequeue a"},
		{"another script", append([]any{"evalsha", "0000000000000000000000000000000000000000", 4}, dq...), ""},
		{"keys of two queues", []any{"evalsha", "a8153319360adc71cdc370107f8ab9786f204765", 4,
			"asynq:{a}:pending", "asynq:{b}:paused", "asynq:{a}:active", "asynq:{a}:lease", int64(1), "asynq:{a}:t:"}, ""},
		{"one key short", []any{"evalsha", "a8153319360adc71cdc370107f8ab9786f204765", 3,
			"asynq:{a}:pending", "asynq:{a}:paused", "asynq:{a}:active", int64(1), "asynq:{a}:t:"}, ""},
		{"asynq's forward", []any{"evalsha", "522b1a6ae66fe79ea2f24a9af58798ab71879035", 2,
			"asynq:{a}:retry", "asynq:{a}:pending", int64(1), "asynq:{a}:t:", int64(1e9), "asynq:{a}:g:"}, "forward asynq:{a}:retry"},
		{"forward into another queue", []any{"evalsha", "522b1a6ae66fe79ea2f24a9af58798ab71879035", 2,
			"asynq:{a}:retry", "asynq:{b}:pending", int64(1), "asynq:{a}:t:", int64(1e9), "asynq:{a}:g:"}, ""},
		{"a plain command", []any{"llen", "asynq:{a}:pending"}, ""},
	} {
		if got := idlepoll.Recognise(redis.NewCmd(ctx, tc.args...)); got != tc.want {
			t.Errorf("%s: taken for %q, want %q", tc.name, got, tc.want)
		}
	}
}

// With the hook, an idle server's polling costs Redis a few calls a
// second, and tasks still run promptly: pending ones, on both queues, in a
// paused queue only once resumed, and scheduled ones at their time.
func TestIdleServerPollsLittleAndRunsTasks(t *testing.T) {
	t.Parallel()
	rdb := client(t)
	wire := newRecorder() // added after the hook: sees what reaches Redis
	rdb.AddHook(idlepoll.New(idlepoll.Config{Queues: []string{"a", "b"},
		TaskCheckInterval: 20 * time.Millisecond, DelayedTaskCheckInterval: 50 * time.Millisecond}))
	rdb.AddHook(wire)
	got := make(chan string, 100)
	server(t, rdb, got)
	enq := asynq.NewClientFromRedisClient(rdb)
	insp := asynq.NewInspectorFromRedisClient(rdb)

	time.Sleep(1500 * time.Millisecond) // idle
	before := wire.total.Load()
	time.Sleep(time.Second)
	// Unhooked: a round of 2 dequeue calls every 10–30 ms, 4 forward calls
	// every 50 ms: ≈ 180/s. Hooked: one check per 80 ms hold, one per
	// forward round, the heartbeats.
	n := wire.total.Load() - before
	t.Logf("idle server: %d commands in 1 s", n)
	if n > 50 {
		t.Errorf("idle server sent %d commands in 1 s, want ≤ 50", n)
	}

	for _, q := range []string{"a", "b"} {
		time.Sleep(1500 * time.Millisecond) // idle again
		start := time.Now()
		if _, err := enq.Enqueue(asynq.NewTask("t", []byte("pending-"+q)), asynq.Queue(q)); err != nil {
			t.Fatal(err)
		}
		ran(t, got, "pending-"+q, 250*time.Millisecond)
		t.Logf("queue %s: run %v after enqueue on an idle server", q, time.Since(start))
	}

	if err := insp.PauseQueue("b"); err != nil {
		t.Fatal(err)
	}
	if _, err := enq.Enqueue(asynq.NewTask("t", []byte("paused")), asynq.Queue("b")); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-got:
		t.Fatalf("ran %q from a paused queue", p)
	case <-time.After(300 * time.Millisecond):
	}
	if err := insp.UnpauseQueue("b"); err != nil {
		t.Fatal(err)
	}
	ran(t, got, "paused", 250*time.Millisecond)

	at := time.Now().Add(time.Second).Truncate(time.Second).Add(time.Second)
	if _, err := enq.Enqueue(asynq.NewTask("t", []byte("scheduled")), asynq.Queue("a"), asynq.ProcessAt(at)); err != nil {
		t.Fatal(err)
	}
	ran(t, got, "scheduled", 4*time.Second)
	late := time.Since(at)
	t.Logf("scheduled task: run %v after its time", late)
	if late > 250*time.Millisecond {
		t.Errorf("scheduled task ran %v after its time, want ≤ 250ms", late)
	}

	// A burst across both queues: every task runs once.
	const burst = 60
	for i := range burst {
		q := []string{"a", "b"}[i%2]
		if _, err := enq.Enqueue(asynq.NewTask("t", []byte("burst")), asynq.Queue(q)); err != nil {
			t.Fatal(err)
		}
	}
	for range burst {
		ran(t, got, "burst", 5*time.Second)
	}
}

// busyServer starts an asynq server on rdb for queues a (weight 2) and b,
// 8 at a time, with a handler that counts the tasks each queue ran and
// fails the test if a task runs twice.
type busyServer struct {
	ran   sync.Map // task ID → true
	count map[string]*atomic.Int64
}

func startBusyServer(t *testing.T, rdb *redis.Client) *busyServer {
	t.Helper()
	b := &busyServer{count: map[string]*atomic.Int64{"a": {}, "b": {}}}
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Queues: map[string]int{"a": 2, "b": 1}, Concurrency: 8,
		TaskCheckInterval: 20 * time.Millisecond, DelayedTaskCheckInterval: 50 * time.Millisecond,
		LogLevel: asynq.FatalLevel,
	})
	err := srv.Start(asynq.HandlerFunc(func(ctx context.Context, task *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		if _, dup := b.ran.LoadOrStore(id, true); dup {
			t.Errorf("task %s ran twice", id)
		}
		q, _ := asynq.GetQueueName(ctx)
		b.count[q].Add(1)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return b
}

// fill enqueues n tasks in queue q, paused, so they are all there before
// a worker takes any; unpause starts them.
func fill(t *testing.T, rdb *redis.Client, q string, n int) (unpause func()) {
	t.Helper()
	insp := asynq.NewInspectorFromRedisClient(rdb)
	enq := asynq.NewClientFromRedisClient(rdb)
	if err := insp.PauseQueue(q); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := enq.Enqueue(asynq.NewTask("t", nil), asynq.Queue(q), asynq.TaskID(fmt.Sprint(q, "-", i))); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		if err := insp.UnpauseQueue(q); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBusyServerDequeuesWithoutACheckPerTask: while a queue keeps yielding
// tasks, the hook lets asynq's dequeue script run without a ready check
// before each one (a check would find what the script finds): a drain of
// many tasks costs about two calls a task (dequeue, done) on the wire, not
// three. Every task still runs once. The hook's check interval is long
// here, so a check is carried for its 16 rounds however slow the machine.
func TestBusyServerDequeuesWithoutACheckPerTask(t *testing.T) {
	t.Parallel()
	rdb := client(t)
	wire := newRecorder()
	rdb.AddHook(idlepoll.New(idlepoll.Config{Queues: []string{"a", "b"},
		TaskCheckInterval: time.Second, DelayedTaskCheckInterval: 50 * time.Millisecond}))
	rdb.AddHook(wire)
	const n = 400
	unpause := fill(t, rdb, "a", n)
	srv := startBusyServer(t, rdb)

	before := wire.total.Load()
	unpause()
	testenv.Eventually(t, 30*time.Second, fmt.Sprintf("all %d tasks run", n), func() (bool, error) {
		return srv.count["a"].Load() == n, nil
	})
	calls := wire.total.Load() - before
	t.Logf("drained %d tasks with %d Redis calls (%.2f a task)", n, calls, float64(calls)/n)
	if perTask := float64(calls) / n; perTask > 2.4 {
		t.Errorf("drain cost %.2f Redis calls a task, want ≤ 2.4 (dequeue and done, checks shared)", perTask)
	}
}

// TestBusyQueueDoesNotHoldBackAnother: a check carried across rounds still
// says the other queue is empty, but only for a check interval (or 16
// rounds): a task enqueued in b while a drains a long backlog runs long
// before a is drained, not after it.
func TestBusyQueueDoesNotHoldBackAnother(t *testing.T) {
	t.Parallel()
	rdb := client(t)
	rdb.AddHook(idlepoll.New(idlepoll.Config{Queues: []string{"a", "b"},
		TaskCheckInterval: 20 * time.Millisecond, DelayedTaskCheckInterval: 50 * time.Millisecond}))
	const n = 2000
	unpause := fill(t, rdb, "a", n)
	srv := startBusyServer(t, rdb)
	unpause()
	testenv.Eventually(t, 30*time.Second, "queue a under way", func() (bool, error) {
		return srv.count["a"].Load() >= 50, nil
	})
	start, at := time.Now(), srv.count["a"].Load()
	if _, err := asynq.NewClientFromRedisClient(rdb).Enqueue(asynq.NewTask("t", nil), asynq.Queue("b"), asynq.TaskID("b-late")); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the task in b run", func() (bool, error) {
		return srv.count["b"].Load() == 1, nil
	})
	after := srv.count["a"].Load()
	t.Logf("b's task ran %v after its enqueue, while a ran %d tasks (of %d left)", time.Since(start), after-at, n-at)
	if after == n {
		t.Errorf("b's task ran only once a's %d tasks were all done", n)
	}
}
