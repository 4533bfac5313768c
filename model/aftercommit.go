package model

import (
	"context"
	"slices"
)

// AfterCommit is what a committed transaction leaves for the world outside
// the ledger (river's JobCompleteTx idea: the transaction, not its caller,
// knows what it changed). The writes fill it themselves — InsertOutboxLater
// adds its row, the order and refund moves add the order — so a new move
// cannot forget to send its task or to drop a stale cached view. It is
// handed to the Store's AfterCommitFunc once, after COMMIT succeeded:
// never after a rollback, a failed commit or a deadlock's discarded
// attempt; a nested InTx adds to the outer transaction's list. The engine
// keeps the list (sqlexec's aftercommit.go); this is what the ledger puts
// on it.
type AfterCommit struct {
	// Outbox are the rows the transaction wrote, to hand to asynq now
	// rather than at the relay poller's next pass.
	Outbox []*OutboxRow
	// Orders are the orders whose status or refunds changed: their cached
	// views are stale. Each order appears once.
	Orders []OrderRef
}

// OrderRef names an order both ways its view is cached: by ID and by number.
type OrderRef struct {
	ID int64
	No string
}

// AfterCommitFunc does a committed transaction's after-commit work. It must
// not fail the caller: the commit stands, and what it could not do (a
// Redis outage) is left to the relay poller and the cache TTL.
type AfterCommitFunc func(ctx context.Context, work AfterCommit)

// SetAfterCommit installs the after-commit work (svc wires the relay and
// the order cache). Call it once, before the Store is shared: transactions
// copy it when they start.
func (s *Store) SetAfterCommit(fn AfterCommitFunc) {
	s.x.SetAfterCommit(func(ctx context.Context, items []any) { fn(ctx, collect(items)) })
}

// collect sorts a transaction's items into its AfterCommit, each order once.
func collect(items []any) AfterCommit {
	var w AfterCommit
	for _, it := range items {
		switch v := it.(type) {
		case *OutboxRow:
			w.Outbox = append(w.Outbox, v)
		case OrderRef:
			if !slices.Contains(w.Orders, v) {
				w.Orders = append(w.Orders, v)
			}
		}
	}
	return w
}

// sendAfterCommit adds an outbox row to the transaction's after-commit
// work; outside a transaction the row was just written, so it goes now.
func (s *Store) sendAfterCommit(ctx context.Context, r *OutboxRow) { s.x.AfterCommit(ctx, r) }

// staleAfterCommit adds an order whose view changed to the transaction's
// after-commit work; outside a transaction the change was just written, so
// its cached view is dropped now.
func (s *Store) staleAfterCommit(ctx context.Context, id int64, orderNo string) {
	s.x.AfterCommit(ctx, OrderRef{ID: id, No: orderNo})
}
