package worker

import (
	"context"
	"time"

	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/schedule"
	"orderflow/internal/infra/tasks"
	"orderflow/model"

	"github.com/hibiken/asynq"
	"go.uber.org/zap"
)

// Enqueuer is enqueuer, for the external tests' fault-injecting clients.
type Enqueuer = enqueuer

// Periodic exposes one worker's periodic loop to the tests.
type Periodic struct{ p *periodic }

// NewPeriodic builds the loop for the reconciliation on a cron spec; epoch,
// when not nil, is its epoch check.
func NewPeriodic(spec string, client Enqueuer, store *model.Store, table tasks.Table, clk clock.Clock,
	epoch func(context.Context) (bool, string)) (*Periodic, error) {
	when, err := schedule.Parse(spec)
	if err != nil {
		return nil, err
	}
	return &Periodic{&periodic{
		jobs:   []schedule.Job{{Type: tasks.TypeReconcile, When: when}},
		client: client, store: store, table: table, clock: clk, log: zap.NewNop(),
		tick: time.Second, epoch: epoch,
	}}, nil
}

// Tick runs one tick.
func (p *Periodic) Tick(ctx context.Context) { p.p.enqueueDue(ctx) }

var _ Enqueuer = (*asynq.Client)(nil)
