package svc

import (
	"context"

	"orderflow/internal/infra/failpoint"
	"orderflow/internal/infra/ordercache"
	"orderflow/internal/infra/outbox"
	"orderflow/model"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// afterCommit is the ledger's after-commit work, the one place it is
// written: every committed transaction drops the cached views of the orders
// it changed (one pipelined round trip) and hands the outbox rows it wrote
// to the relay's fast path (no read back). The transaction fills the list
// itself (model/aftercommit.go), so a use case never writes either step.
// The cache goes first, as it did when each use case wrote the pair.
func afterCommit(relay *outbox.Relay, rdb redis.UniversalClient, log *zap.Logger) model.AfterCommitFunc {
	return func(ctx context.Context, w model.AfterCommit) {
		for _, r := range w.Outbox {
			if err := failpoint.Inject(failpoint.AfterCommitSend, r.TaskType); err != nil {
				return // as if the process died here: the relay poller sends the rows
			}
		}
		ordercache.Drop(ctx, rdb, log, w.Orders...)
		relay.SendRows(ctx, w.Outbox...)
	}
}
