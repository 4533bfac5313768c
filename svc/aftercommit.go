package svc

import (
	"context"

	"orderflow/internal/infra/failpoint"
	"orderflow/internal/infra/idlepoll"
	"orderflow/internal/infra/ordercache"
	"orderflow/internal/infra/outbox"
	"orderflow/model"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// afterCommit is the ledger's after-commit work, the one place it is
// written: every committed transaction hands the outbox rows it wrote to
// the relay's fast path (no read back), then drops the cached views of the
// orders it changed and announces a task due now to the workers, the two
// in one pipelined round trip (the announcement must follow the enqueue).
// The transaction fills the list itself (model/aftercommit.go), so a use
// case never writes either step.
func afterCommit(relay *outbox.Relay, rdb redis.UniversalClient, log *zap.Logger) model.AfterCommitFunc {
	return func(ctx context.Context, w model.AfterCommit) {
		for _, r := range w.Outbox {
			if err := failpoint.Inject(failpoint.AfterCommitSend, r.TaskType); err != nil {
				return // as if the process died here: the relay poller sends the rows
			}
		}
		var announce func(redis.Pipeliner)
		if relay.SendRows(ctx, w.Outbox...) {
			announce = func(p redis.Pipeliner) { idlepoll.AnnounceIn(ctx, p, rdb) }
		}
		ordercache.DropAnd(ctx, rdb, log, announce, w.Orders...)
	}
}
