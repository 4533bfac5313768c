package worker

import (
	"context"
	"errors"
	"strconv"
	"time"

	"orderflow/clock"
	"orderflow/tasks"

	"github.com/hibiken/asynq"
	"go.uber.org/zap"
)

// schedule tells a periodic job's slot: the start of the period a time falls in.
type schedule interface {
	slot(t time.Time) time.Time
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
	for _, j := range p.jobs {
		slot := j.when.slot(now)
		if p.last[j.taskType].Equal(slot) {
			continue
		}
		id := j.taskType + ":" + strconv.FormatInt(slot.UnixMilli(), 10)
		task, err := p.table.NewTask(j.taskType, id, nil, time.Time{})
		if err != nil {
			p.log.Error("periodic job misconfigured", zap.String("task_type", j.taskType), zap.Error(err))
			continue
		}
		_, err = p.client.EnqueueContext(ctx, task)
		switch {
		case err == nil:
			p.log.Debug("periodic job enqueued", zap.String("task_id", id))
		case errors.Is(err, asynq.ErrTaskIDConflict):
			// Another process of the fleet enqueued this slot first.
		default:
			p.log.Warn("periodic job enqueue failed; next tick retries", zap.String("task_id", id), zap.Error(err))
			continue
		}
		p.last[j.taskType] = slot
	}
}
