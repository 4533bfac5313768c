package tasks

import (
	"context"
	"errors"
	"fmt"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// Live reports whether asynq holds a task with this ID that will still run
// (pending, scheduled, active, retry or aggregating). A missing queue or task,
// or one archived or completed, is not live: its object needs a re-queue.
func (t Table) Live(insp *asynq.Inspector, typ, id string) (bool, error) {
	info, err := insp.GetTaskInfo(t[typ].Queue, id)
	if errors.Is(err, asynq.ErrTaskNotFound) || errors.Is(err, asynq.ErrQueueNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("inspect task %s: %w", id, err)
	}
	return info.State != asynq.TaskStateArchived && info.State != asynq.TaskStateCompleted, nil
}

// liveStates are the asynq task states that will still run.
var liveStates = map[string]bool{"pending": true, "scheduled": true, "active": true, "retry": true, "aggregating": true}

// LiveMany is Live for many tasks of one type in one pipelined round trip:
// it reads the state field of asynq's task hash (asynq:{<queue>}:t:<id>,
// the layout Inspector.GetTaskInfo reads; TestLiveManyMatchesInspector holds
// it to asynq's own answer). It returns the IDs that are live.
func (t Table) LiveMany(ctx context.Context, rdb redis.UniversalClient, typ string, ids []string) (map[string]bool, error) {
	return t.inStates(ctx, rdb, typ, ids, liveStates)
}

// ActiveMany is LiveMany for the one state "active": the tasks a worker
// took and has not finished — or a worker that died left, until asynq
// takes them back.
func (t Table) ActiveMany(ctx context.Context, rdb redis.UniversalClient, typ string, ids []string) (map[string]bool, error) {
	return t.inStates(ctx, rdb, typ, ids, map[string]bool{"active": true})
}

// inStates returns the IDs whose task asynq holds in one of states.
func (t Table) inStates(ctx context.Context, rdb redis.UniversalClient, typ string, ids []string, states map[string]bool) (map[string]bool, error) {
	in := make(map[string]bool, len(ids))
	if len(ids) == 0 {
		return in, nil
	}
	q := t[typ].Queue
	cmds := make([]*redis.StringCmd, len(ids))
	pipe := rdb.Pipeline()
	for i, id := range ids {
		cmds[i] = pipe.HGet(ctx, "asynq:{"+q+"}:t:"+id, "state")
	}
	_, _ = pipe.Exec(ctx) // each command's own error is read below
	for i, c := range cmds {
		if err := c.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("inspect %d %s tasks: %w", len(ids), typ, err)
		}
		if states[c.Val()] {
			in[ids[i]] = true
		}
	}
	return in, nil
}
