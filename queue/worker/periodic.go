package worker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"orderflow/clock"
	"orderflow/svc"
	"orderflow/tasks"

	"github.com/robfig/cron/v3"

	"github.com/hibiken/asynq"
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

// parseSchedule reads "@every 10s" as an epoch-aligned interval (robfig's own
// @every counts from process start, which would differ per process) and
// anything else as a cron spec.
func parseSchedule(spec string) (schedule, error) {
	if d, ok := strings.CutPrefix(spec, "@every "); ok {
		dur, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil || dur <= 0 {
			return nil, fmt.Errorf("schedule %q: %v", spec, err)
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

// periodic enqueues each job once per slot for the whole fleet: the task ID
// is derived from the slot, so the second process to enqueue a slot is
// refused by asynq (the task is retained past its slot for that reason).
type periodic struct {
	jobs   []periodicJob
	client *asynq.Client
	table  tasks.Table
	clock  clock.Clock
	log    *zap.Logger
	tick   time.Duration
	last   map[string]time.Time
	// epoch, when set, is called every tick; true means Redis lost its state
	// and reconciliation must run now.
	epoch func(ctx context.Context) (bool, string)
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
	if p.epoch != nil {
		if wiped, mark := p.epoch(ctx); wiped {
			p.log.Warn("Redis epoch marker was missing: running reconciliation now", zap.String("epoch", mark))
			p.enqueue(ctx, tasks.TypeReconcile, tasks.TypeReconcile+":epoch:"+mark)
		}
	}
	for _, j := range p.jobs {
		slot := j.when.slot(now)
		if slot.IsZero() || p.last[j.taskType].Equal(slot) {
			continue
		}
		if p.enqueue(ctx, j.taskType, j.taskType+":"+strconv.FormatInt(slot.UnixMilli(), 10)) {
			p.last[j.taskType] = slot
		}
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
