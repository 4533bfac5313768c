package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"orderflow/internal/domain/fleet"
	"orderflow/internal/domain/reconcile"
	"orderflow/internal/infra/health"
	"orderflow/internal/infra/idlepoll"
	"orderflow/internal/infra/metrics"
	"orderflow/internal/infra/profiling"
	"orderflow/internal/infra/tasks"
	"orderflow/svc"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// Worker runs asynq handlers, the periodic jobs (an asynq Scheduler), the outbox poller and the
// worker's /healthz, /readyz endpoints.
type Worker struct {
	sc     *svc.ServiceContext
	uc     *svc.UseCases
	srv    *asynq.Server
	sched  *asynq.Scheduler
	http   *http.Server
	cancel context.CancelFunc
	wg     sync.WaitGroup
	addr   string
	// listen starts the idle hook's wake-ups (nil without the hook);
	// stopListen ends them.
	listen     func() (stop func())
	stopListen func()
}

// New builds a worker on a service context.
func New(sc *svc.ServiceContext, uc *svc.UseCases) *Worker {
	c := sc.Config
	listen := installIdlePoll(sc)
	srv := asynq.NewServerFromRedisClient(sc.Redis, asynq.Config{
		Concurrency:              c.Concurrency,
		Queues:                   tasks.QueueWeights,
		RetryDelayFunc:           sc.Tasks.RetryDelay,
		TaskCheckInterval:        c.TaskCheckInterval.D(),
		DelayedTaskCheckInterval: c.DelayedTaskCheckInterval.D(),
		ShutdownTimeout:          c.ShutdownTimeout.D(),
		Logger:                   asynqLogger{sc.Log.Sugar().Named("asynq")},
		LogLevel:                 asynq.WarnLevel,
		ErrorHandler: asynq.ErrorHandlerFunc(func(ctx context.Context, t *asynq.Task, err error) {
			id, _ := asynq.GetTaskID(ctx)
			retried, _ := asynq.GetRetryCount(ctx)
			sc.Log.Warn("task failed", zap.String("task_type", t.Type()), zap.String("task_id", id), zap.Int("retried", retried), zap.Error(err))
		}),
	})
	return &Worker{sc: sc, uc: uc, srv: srv, listen: listen}
}

// installIdlePoll puts the idle-polling hook on the worker's Redis client
// (its own, not the API's): one check per round answers asynq's per-queue
// dequeue and forward calls. A Cluster client is left as it is — the queues
// live in different slots, so one script cannot read them all. It returns
// what starts the hook's wake-ups (idlepoll.Listen), nil on a Cluster.
func installIdlePoll(sc *svc.ServiceContext) func() (stop func()) {
	rdb, ok := sc.Redis.(*redis.Client) // standalone or Sentinel
	if !ok {
		return nil
	}
	queues := sc.Tasks.Queues()
	slices.SortFunc(queues, func(a, b string) int { // the heaviest first, then by name
		return cmp.Or(cmp.Compare(tasks.QueueWeights[b], tasks.QueueWeights[a]), cmp.Compare(a, b))
	})
	hook := idlepoll.New(idlepoll.Config{
		Queues:                   queues,
		TaskCheckInterval:        sc.Config.TaskCheckInterval.D(),
		DelayedTaskCheckInterval: sc.Config.DelayedTaskCheckInterval.D(),
		WakeChannel:              idlepoll.Channel(rdb),
		Clock:                    sc.Clock,
	})
	rdb.AddHook(hook)
	return func() func() { return hook.Listen(rdb) }
}

// Start begins processing. It returns once everything is running.
func (w *Worker) Start() error {
	c := w.sc.Config
	p := &periodic{
		jobs:   c.PeriodicJobs(),
		client: w.sc.Asynq, store: w.sc.Store, table: w.sc.Tasks, clock: w.sc.Clock, log: w.sc.Log, metrics: w.uc.Metrics,
		tick:     min(time.Second, c.SweepInterval.D()/4, c.NotifyInterval.D()/4),
		announce: func(ctx context.Context) { idlepoll.Announce(ctx, w.sc.Redis) },
		epoch: func(ctx context.Context) (bool, string) {
			wiped, mark, err := reconcile.ClaimEpoch(ctx, w.sc.Redis, w.sc.Clock.Now())
			return err == nil && wiped, mark
		},
	}
	if w.listen != nil {
		w.stopListen = w.listen()
	}
	tasksMux := routes(w.uc, w.sc.Tasks, w.sc.Log)
	tasksMux.Use(p.claimSlot)
	if err := w.srv.Start(tasksMux); err != nil {
		return fmt.Errorf("start asynq server: %w", err)
	}
	sched, err := p.scheduler(w.sc.Redis, schedulerLogger{asynqLogger{w.sc.Log.Sugar().Named("asynq.scheduler")}})
	if err == nil {
		err = sched.Start()
	}
	if err != nil {
		w.srv.Shutdown()
		return fmt.Errorf("start asynq scheduler: %w", err)
	}
	w.sched = sched
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	lease := fleet.New(fleet.Config{
		Self: w.sc.WorkerID, Lease: c.WorkerLease.D(), Queues: w.sc.Tasks.Queues(), Redis: w.sc.Redis,
		Claims: w.uc.Orders, Clock: w.sc.Clock, Log: w.sc.Log, Metrics: w.uc.Metrics,
	})
	w.wg.Add(3)
	go func() { defer w.wg.Done(); w.uc.Relay.Run(ctx, c.RelayInterval.D()) }()
	go func() { defer w.wg.Done(); p.run(ctx) }()
	go func() { defer w.wg.Done(); lease.Run(ctx) }()

	ln, err := net.Listen("tcp", c.HTTPAddr)
	if err != nil {
		w.Shutdown(context.Background())
		return fmt.Errorf("worker http listen %s: %w", c.HTTPAddr, err)
	}
	w.addr = ln.Addr().String()
	hc := &health.Checker{DB: w.sc.DB, Redis: w.sc.Redis}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", hc.Live)
	mux.HandleFunc("GET /readyz", hc.Ready)
	src := w.sc.MetricsSources(w.uc)
	ops := c.Operators()
	mux.Handle("GET /metrics", metrics.Guard(metrics.Handler(w.uc.Metrics, src), c.MetricsAuth, ops))
	profiling.Mount(mux, ops)
	w.http = c.HTTPServer(mux)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		if err := w.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			w.sc.Log.Error("worker http server stopped", zap.Error(err))
		}
	}()
	return nil
}

// Metrics is this worker's collectors (the tests read its periodic runs).
func (w *Worker) Metrics() *metrics.Metrics { return w.uc.Metrics }

// Addr is the address the worker's HTTP endpoints listen on.
func (w *Worker) Addr() string { return w.addr }

// Shutdown stops fetching tasks, waits for running handlers up to the
// configured shutdown timeout (asynq hands unfinished ones back), then stops
// the poller, the periodic jobs and the HTTP endpoints.
func (w *Worker) Shutdown(ctx context.Context) {
	if w.sched != nil {
		w.sched.Shutdown() // its entries leave asynqmon's Schedulers tab
	}
	if w.stopListen != nil {
		w.stopListen() // before the server's stop, which waits for a dequeue held for a wake-up
	}
	w.srv.Shutdown()
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := w.uc.Relay.Flush(fctx); err != nil {
		w.sc.Log.Warn("outbox deletes not flushed; the poller drops those rows", zap.Error(err))
	}
	if w.cancel != nil {
		w.cancel()
	}
	if w.http != nil {
		_ = w.http.Shutdown(ctx)
	}
	w.wg.Wait()
}

// asynqLogger adapts zap to asynq's logger interface.
type asynqLogger struct{ s *zap.SugaredLogger }

func (l asynqLogger) Debug(args ...any) { l.s.Debug(args...) }
func (l asynqLogger) Info(args ...any)  { l.s.Info(args...) }
func (l asynqLogger) Warn(args ...any)  { l.s.Warn(args...) }
func (l asynqLogger) Error(args ...any) { l.s.Error(args...) }
func (l asynqLogger) Fatal(args ...any) { l.s.Fatal(args...) }
