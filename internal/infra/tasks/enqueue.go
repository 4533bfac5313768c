package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// ErrDuplicate is an enqueue refused because a task with the same ID is
// already queued: for a ledger-derived ID, someone queued it first.
var ErrDuplicate = errors.New("tasks: a task with this id is already queued")

// Enqueuer puts a task of the table on asynq, so a caller that only
// re-queues — the sweep — needs neither asynq's client nor its errors.
type Enqueuer struct {
	Table  Table
	Client *asynq.Client
}

// Enqueue queues a task of type typ under taskID (processAt zero: now). A
// task already queued under that ID is ErrDuplicate.
func (e Enqueuer) Enqueue(ctx context.Context, typ, taskID string, payload []byte, processAt time.Time) error {
	task, err := e.Table.NewTask(typ, taskID, payload, processAt)
	if err != nil {
		return err
	}
	_, err = e.Client.EnqueueContext(ctx, task)
	if errors.Is(err, asynq.ErrTaskIDConflict) {
		return fmt.Errorf("%s: %w", taskID, ErrDuplicate)
	}
	return err
}
