package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/tasks"
	"orderflow/svc"

	"github.com/robfig/cron/v3"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// schedule tells a periodic job's slot: the start of the period a time falls in.
type schedule interface {
	slot(t time.Time) time.Time
}

// cronSchedule fires at a cron spec's times, which are wall-clock aligned,
// so every process computes the same slots. Its slot is the latest fire time
// passed since the process started (zero before the first).
type cronSchedule struct {
	spec cron.Schedule
	next time.Time
	last time.Time
}

func (c *cronSchedule) slot(t time.Time) time.Time {
	if c.next.IsZero() {
		c.next = c.spec.Next(t)
	}
	for !t.Before(c.next) {
		c.last, c.next = c.next, c.spec.Next(c.next)
	}
	return c.last
}

// prev is the latest fire time at or before t, looking back at most
// catchUpWindow (zero if none): the slot a fleet that was down may have missed.
func (c *cronSchedule) prev(t time.Time) time.Time {
	var last time.Time
	for at := c.spec.Next(t.Add(-catchUpWindow)); !at.After(t); at = c.spec.Next(at) {
		last = at
	}
	return last
}

// catchUpWindow is how far back a starting worker looks for a missed slot
// (a week: a daily or weekly schedule's last slot is always inside).
const catchUpWindow = 8 * 24 * time.Hour

// missable is a schedule whose slot a down fleet can miss outright (a cron
// time); an interval's current slot is simply run at start.
type missable interface {
	prev(t time.Time) time.Time
}

// parseSchedule reads "@every 10s" as an epoch-aligned interval (robfig's own
// @every counts from process start, which would differ per process) and
// anything else as a cron spec.
func parseSchedule(spec string) (schedule, error) {
	if d, ok := strings.CutPrefix(spec, "@every "); ok {
		dur, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil {
			return nil, fmt.Errorf("schedule %q: %w", spec, err)
		}
		if dur <= 0 {
			return nil, fmt.Errorf("schedule %q: the interval must be positive", spec)
		}
		return every(dur), nil
	}
	s, err := svc.CronParser.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("schedule %q: %w", spec, err)
	}
	return &cronSchedule{spec: s}, nil
}

// every is a fixed interval aligned to the Unix epoch, so every process
// computes the same slots.
type every time.Duration

func (e every) slot(t time.Time) time.Time { return t.Truncate(time.Duration(e)) }

// periodicJob is one periodic task type and when it runs.
type periodicJob struct {
	taskType string
	when     schedule
}

// enqueuer is the part of the asynq client the periodic jobs use.
type enqueuer interface {
	EnqueueContext(ctx context.Context, task *asynq.Task, opts ...asynq.Option) (*asynq.TaskInfo, error)
}

// lastSlotKey remembers, per periodic type, the latest slot the fleet
// enqueued, so a worker starting after a slot no worker was alive for
// runs that slot (once: its ID is the slot's).
func lastSlotKey(taskType string) string { return "orderflow:periodic:last:" + taskType }

// periodic enqueues each job once per slot for the whole fleet: the task ID
// is derived from the slot, so the second process to enqueue a slot is
// refused by asynq (the task is retained past its slot for that reason).
type periodic struct {
	jobs   []periodicJob
	client enqueuer
	rdb    redis.UniversalClient
	table  tasks.Table
	clock  clock.Clock
	log    *zap.Logger
	tick   time.Duration
	last   map[string]time.Time
	// epoch, when set, is called every tick; true means Redis lost its state
	// and reconciliation must run now.
	epoch func(ctx context.Context) (bool, string)
	// epochMark is an epoch-triggered reconciliation not yet enqueued: the
	// marker is set, so only this process knows; it retries every tick.
	epochMark string
	// caughtUp is set once the missed-slot check at start has run.
	caughtUp bool
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

func (p *periodic) enqueueDue(ctx context.Context) {
	now := p.clock.Now()
	if p.epoch != nil && p.epochMark == "" {
		if wiped, mark := p.epoch(ctx); wiped {
			p.log.Warn("Redis epoch marker was missing: running reconciliation now", zap.String("epoch", mark))
			p.epochMark = mark
		}
	}
	if p.epochMark != "" && p.enqueue(ctx, tasks.TypeReconcile, tasks.TypeReconcile+":epoch:"+p.epochMark) {
		p.epochMark = ""
	}
	if !p.caughtUp {
		p.caughtUp = p.catchUp(ctx, now)
	}
	for _, j := range p.jobs {
		slot := j.when.slot(now)
		if slot.IsZero() || p.last[j.taskType].Equal(slot) {
			continue
		}
		if p.enqueue(ctx, j.taskType, tasks.PeriodicID(j.taskType, slot)) {
			p.last[j.taskType] = slot
			p.remember(ctx, j, slot)
		}
	}
}

// catchUp runs, for each job whose slots can be missed, its latest slot if
// the fleet never enqueued it (every worker was down across it). It
// reports whether the check is done; false retries it next tick.
func (p *periodic) catchUp(ctx context.Context, now time.Time) bool {
	done := true
	for _, j := range p.jobs {
		m, ok := j.when.(missable)
		if !ok {
			continue
		}
		prev := m.prev(now)
		if prev.IsZero() {
			continue
		}
		last, err := p.rdb.Get(ctx, lastSlotKey(j.taskType)).Int64()
		if err != nil && !errors.Is(err, redis.Nil) {
			p.log.Warn("missed-slot check failed; next tick retries", zap.String("task_type", j.taskType), zap.Error(err))
			done = false
			continue
		}
		if last >= prev.UnixMilli() {
			continue
		}
		p.log.Warn("periodic slot was missed (no worker ran it): running it now", zap.String("task_type", j.taskType),
			zap.Time("slot", prev))
		if !p.enqueue(ctx, j.taskType, tasks.PeriodicID(j.taskType, prev)) {
			done = false
			continue
		}
		p.remember(ctx, j, prev)
	}
	return done
}

// rememberSlot sets KEYS[1] to ARGV[1] unless it already holds a later slot.
//
//	KEYS[1] lastSlotKey(type)
//	ARGV[1] the slot, Unix milliseconds
//	returns 1 if set, 0 if a later slot was already there
var rememberSlot = redis.NewScript(`
local cur = tonumber(redis.call("GET", KEYS[1]) or "0")
if cur >= tonumber(ARGV[1]) then return 0 end
redis.call("SET", KEYS[1], ARGV[1])
return 1
`)

// remember records a missable job's enqueued slot for the catch-up check.
func (p *periodic) remember(ctx context.Context, j periodicJob, slot time.Time) {
	if _, ok := j.when.(missable); !ok || p.rdb == nil {
		return
	}
	if err := rememberSlot.Run(ctx, p.rdb, []string{lastSlotKey(j.taskType)}, slot.UnixMilli()).Err(); err != nil {
		// The slot was enqueued; a worker starting later may enqueue it again
		// and be refused by its ID while it is retained.
		p.log.Warn("periodic slot not remembered", zap.String("task_type", j.taskType), zap.Error(err))
	}
}

// enqueue pushes one periodic task; a task-ID conflict means another process
// of the fleet enqueued this slot first, which is success too.
func (p *periodic) enqueue(ctx context.Context, taskType, id string) bool {
	task, err := p.table.NewTask(taskType, id, nil, time.Time{})
	if err != nil {
		p.log.Error("periodic job misconfigured", zap.String("task_type", taskType), zap.Error(err))
		return false
	}
	_, err = p.client.EnqueueContext(ctx, task)
	switch {
	case err == nil:
		p.log.Debug("periodic job enqueued", zap.String("task_id", id))
	case errors.Is(err, asynq.ErrTaskIDConflict):
	default:
		p.log.Warn("periodic job enqueue failed; next tick retries", zap.String("task_id", id), zap.Error(err))
		return false
	}
	return true
}
