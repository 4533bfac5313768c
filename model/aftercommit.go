package model

import "context"

// AfterCommit is what a committed transaction leaves for the world outside
// the ledger (river's JobCompleteTx idea: the transaction, not its caller,
// knows what it changed). The writes fill it themselves — InsertOutboxLater
// adds its row, the order and refund moves add the order — so a new move
// cannot forget to send its task or to drop a stale cached view. It is
// handed to the Store's AfterCommitFunc once, after COMMIT succeeded: never
// after a rollback, a failed commit or a deadlock's discarded attempt; a
// nested InTx adds to the outer transaction's list.
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
func (s *Store) SetAfterCommit(fn AfterCommitFunc) { s.onCommit = fn }

// empty reports whether there is nothing to do.
func (w *AfterCommit) empty() bool { return len(w.Outbox) == 0 && len(w.Orders) == 0 }

// sendAfterCommit adds an outbox row to the transaction's after-commit
// work; outside a transaction the row was just written, so it goes now.
func (s *Store) sendAfterCommit(ctx context.Context, r *OutboxRow) {
	if s.after == nil {
		s.runAfterCommit(ctx, &AfterCommit{Outbox: []*OutboxRow{r}})
		return
	}
	s.after.Outbox = append(s.after.Outbox, r)
}

// staleAfterCommit adds an order whose view changed to the transaction's
// after-commit work; outside a transaction the change was just written, so
// its cached view is dropped now.
func (s *Store) staleAfterCommit(ctx context.Context, id int64, orderNo string) {
	ref := OrderRef{ID: id, No: orderNo}
	if s.after == nil {
		s.runAfterCommit(ctx, &AfterCommit{Orders: []OrderRef{ref}})
		return
	}
	for _, o := range s.after.Orders {
		if o == ref {
			return
		}
	}
	s.after.Orders = append(s.after.Orders, ref)
}

// runAfterCommit hands committed work to the installed func, if any.
func (s *Store) runAfterCommit(ctx context.Context, w *AfterCommit) {
	if s.onCommit != nil && !w.empty() {
		s.onCommit(ctx, *w)
	}
}
