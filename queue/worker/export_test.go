package worker

import (
	"context"
	"time"

	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/tasks"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// Enqueuer is enqueuer, for the external tests' fault-injecting clients.
type Enqueuer = enqueuer

// Periodic exposes one periodic scheduler's tick to the tests.
type Periodic struct{ p *periodic }

// NewPeriodic builds a scheduler for the reconciliation on a cron spec; epoch,
// when not nil, is its epoch check.
func NewPeriodic(spec string, client Enqueuer, rdb redis.UniversalClient, table tasks.Table, clk clock.Clock,
	epoch func(context.Context) (bool, string)) (*Periodic, error) {
	when, err := parseSchedule(spec)
	if err != nil {
		return nil, err
	}
	return &Periodic{&periodic{
		jobs:   []periodicJob{{taskType: tasks.TypeReconcile, when: when}},
		client: client, rdb: rdb, table: table, clock: clk, log: zap.NewNop(),
		tick: time.Second, last: map[string]time.Time{}, epoch: epoch,
	}}, nil
}

// Tick runs one tick.
func (p *Periodic) Tick(ctx context.Context) { p.p.enqueueDue(ctx) }

var _ Enqueuer = (*asynq.Client)(nil)
