package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/idlepoll"
	"orderflow/internal/infra/metrics"
	"orderflow/internal/infra/schedule"
	"orderflow/internal/infra/tasks"
	"orderflow/model"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// The periodic jobs are asynq Scheduler entries on every worker, so
// asynqmon's Schedulers tab lists them with their next run. asynq's
// Scheduler enqueues once per process, so each worker's fires the job; the
// run that claims the slot in the ledger (model.ClaimPeriodicSlot) does
// the work and the others end at once: once per slot for the fleet.
//
// Besides the Scheduler, a small loop per worker runs what it cannot: at
// start, the latest slot of each job if no run claimed it (every worker was
// down across it: the missed-slot catch-up); and every tick, the check for
// a Redis that lost its state, which runs a reconciliation at once.

// enqueuer is the part of the asynq client the periodic jobs use.
type enqueuer interface {
	EnqueueContext(ctx context.Context, task *asynq.Task, opts ...asynq.Option) (*asynq.TaskInfo, error)
}

// periodic is one worker's share of the periodic jobs.
type periodic struct {
	jobs    []schedule.Job
	client  enqueuer
	store   *model.Store
	table   tasks.Table
	clock   clock.Clock
	log     *zap.Logger
	metrics *metrics.Metrics
	tick    time.Duration
	// announce, when set, tells the workers a task is due now (idlepoll.Announce).
	announce func(ctx context.Context)
	// epoch, when set, is called every tick; true means Redis lost its state
	// and reconciliation must run now.
	epoch func(ctx context.Context) (bool, string)
	// epochMark is an epoch-triggered reconciliation not yet enqueued: the
	// marker is set, so only this process knows; it retries every tick.
	epochMark string
	// caughtUp is set once the missed-slot check at start has run.
	caughtUp bool
}

// scheduler builds the asynq Scheduler with one entry per job. Its
// heartbeat (which writes the entries asynqmon lists) is at most the
// shortest job's interval, so a short test schedule shows at once.
func (p *periodic) scheduler(rdb redis.UniversalClient, logger asynq.Logger) (*asynq.Scheduler, error) {
	beat := 10 * time.Second
	for _, j := range p.jobs {
		beat = max(time.Second, min(beat, j.When.Interval(p.clock.Now())))
	}
	s := asynq.NewSchedulerFromRedisClient(rdb, &asynq.SchedulerOpts{
		HeartbeatInterval: beat, Logger: logger, LogLevel: asynq.WarnLevel,
		// The schedules' own time zone: a cron spec is local time (robfig's default).
		Location: time.Local,
		PostEnqueueFunc: func(info *asynq.TaskInfo, err error) {
			if err != nil {
				p.log.Warn("periodic job enqueue failed; its next fire or another worker's runs the slot", zap.Error(err))
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			idlepoll.Announce(ctx, rdb)
		},
	})
	for _, j := range p.jobs {
		opts, err := p.options(j.Type)
		if err != nil {
			return nil, err
		}
		if _, err := s.Register(j.When.Spec(), asynq.NewTask(j.Type, nil), opts...); err != nil {
			return nil, fmt.Errorf("register %s on %q: %w", j.Type, j.When.Spec(), err)
		}
	}
	return s, nil
}

// options are a periodic type's queue, retries and timeout from the task
// table; the Scheduler's tasks get asynq's own IDs.
func (p *periodic) options(typ string) ([]asynq.Option, error) {
	s, ok := p.table[typ]
	if !ok {
		return nil, fmt.Errorf("periodic job %s: not in the task table", typ)
	}
	opts := []asynq.Option{asynq.Queue(s.Queue), asynq.MaxRetry(s.MaxRetry)}
	if s.Timeout > 0 {
		opts = append(opts, asynq.Timeout(s.Timeout))
	}
	return opts, nil
}

func (p *periodic) run(ctx context.Context) {
	t := time.NewTicker(p.tick)
	defer t.Stop()
	for {
		p.enqueueDue(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// enqueueDue is one tick: the epoch check, and the catch-up until it is done.
func (p *periodic) enqueueDue(ctx context.Context) {
	if p.epoch != nil && p.epochMark == "" {
		if wiped, mark := p.epoch(ctx); wiped {
			p.log.Warn("Redis epoch marker was missing: running reconciliation now", zap.String("epoch", mark))
			p.epochMark = mark
		}
	}
	if p.epochMark != "" && p.enqueue(ctx, tasks.TypeReconcile, tasks.TypeReconcile+":epoch:"+p.epochMark,
		tasks.PeriodicPayload{Epoch: p.epochMark}) {
		p.epochMark = ""
	}
	if !p.caughtUp {
		p.caughtUp = p.catchUp(ctx)
	}
}

// catchUp enqueues, for each job whose latest slot no run has claimed, a
// run of that slot: the current slot of an interval job, and the last fire
// of a cron job that the fleet was down across. Its task ID is the slot's,
// so workers starting together add one task; a run the Scheduler already
// started for the slot wins the claim and this one ends. It reports whether
// the check is done; false retries it next tick.
func (p *periodic) catchUp(ctx context.Context) bool {
	last, err := p.store.LastPeriodicSlots(ctx)
	if err != nil {
		p.log.Warn("missed-slot check failed; next tick retries", zap.Error(err))
		return false
	}
	now, done := p.clock.Now(), true
	for _, j := range p.jobs {
		slot := j.When.Slot(now)
		if slot.IsZero() || !last[j.Type].Before(slot) {
			continue
		}
		p.log.Info("periodic slot not run yet: running it now", zap.String("task_type", j.Type), zap.Time("slot", slot))
		if !p.enqueue(ctx, j.Type, tasks.PeriodicID(j.Type, slot), tasks.PeriodicPayload{Slot: slot.UnixMilli()}) {
			done = false
		}
	}
	return done
}

// enqueue pushes one periodic task; a task-ID conflict means another process
// of the fleet enqueued it first, which is success too.
func (p *periodic) enqueue(ctx context.Context, taskType, id string, payload tasks.PeriodicPayload) bool {
	task, err := p.table.NewTask(taskType, id, tasks.Encode(payload), time.Time{})
	if err != nil {
		p.log.Error("periodic job misconfigured", zap.String("task_type", taskType), zap.Error(err))
		return false
	}
	_, err = p.client.EnqueueContext(ctx, task)
	switch {
	case err == nil:
		p.log.Debug("periodic job enqueued", zap.String("task_id", id))
		if p.announce != nil {
			p.announce(ctx)
		}
	case errors.Is(err, asynq.ErrTaskIDConflict):
	default:
		p.log.Warn("periodic job enqueue failed; next tick retries", zap.String("task_id", id), zap.Error(err))
		return false
	}
	return true
}

// claimSlot is the task middleware that makes a periodic run once per slot:
// before a periodic handler runs, its task claims the slot in the ledger;
// a task that finds the slot claimed by another ends without doing anything.
func (p *periodic) claimSlot(next asynq.Handler) asynq.Handler {
	jobs := make(map[string]schedule.Schedule, len(p.jobs))
	for _, j := range p.jobs {
		jobs[j.Type] = j.When
	}
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		when, ok := jobs[t.Type()]
		if !ok {
			return next.ProcessTask(ctx, t)
		}
		var pl tasks.PeriodicPayload
		if len(t.Payload()) > 0 {
			if err := tasks.Decode(t, &pl); err != nil {
				return err
			}
		}
		if pl.Epoch != "" { // a one-off pass; its task ID is its dedup
			return next.ProcessTask(ctx, t)
		}
		now := p.clock.Now()
		slot := when.Slot(now)
		if pl.Slot != 0 {
			slot = time.UnixMilli(pl.Slot)
		}
		if slot.IsZero() {
			return nil // a cron job outside its window: nothing to run
		}
		id, _ := asynq.GetTaskID(ctx)
		won, err := p.store.ClaimPeriodicSlot(ctx, t.Type(), slot, id, now)
		if err != nil {
			return fmt.Errorf("claim %s slot %s: %w", t.Type(), slot.UTC().Format(time.RFC3339Nano), err)
		}
		p.metrics.PeriodicRun(t.Type(), won)
		if !won {
			p.log.Debug("periodic slot already claimed: nothing to do", zap.String("task_type", t.Type()), zap.String("task_id", id),
				zap.Time("slot", slot))
			return nil
		}
		// Only the latest claim is ever read; a frequent job would grow the table.
		if _, err := p.store.PrunePeriodicSlots(ctx, t.Type(), slot.Add(-schedule.CatchUpWindow)); err != nil {
			p.log.Warn("old periodic slots not pruned; the next run retries", zap.String("task_type", t.Type()), zap.Error(err))
		}
		return next.ProcessTask(ctx, t)
	})
}

// schedulerLogger is asynqLogger for the Scheduler, less one line: the
// Scheduler closes its client at shutdown, which asynq refuses for a shared
// connection (ours, owned by the service context) and reports as an error.
type schedulerLogger struct{ asynqLogger }

func (l schedulerLogger) Error(args ...any) {
	if strings.Contains(fmt.Sprint(args...), "redis connection is shared") {
		return
	}
	l.asynqLogger.Error(args...)
}
