package sqlexec

import "context"

// A transaction, not its caller, knows what it changed (river's
// JobCompleteTx idea): its writes register after-commit items as they go —
// a row to hand to a queue, a cached view gone stale — and the items are
// handed to the Session's AfterCommitFunc once, after COMMIT succeeded:
// never after a rollback, a failed commit or a deadlock's discarded
// attempt. A nested InTx adds to the outer transaction's list; if its
// savepoint rolls back, so do the items it added. What an item is, the
// caller decides; the engine only keeps them in order.

// AfterCommitFunc takes a committed transaction's items, in the order they
// were registered. It must not fail the caller: the commit stands.
type AfterCommitFunc func(ctx context.Context, items []any)

// afterCommit is a transaction's items so far.
type afterCommit struct{ items []any }

// SetAfterCommit installs the func that takes committed items. Call it
// once, before the Session is shared: transactions copy it when they start.
func (s *Session) SetAfterCommit(fn AfterCommitFunc) { s.onCommit = fn }

// AfterCommit registers item with the transaction s is in; on the pool the
// write it stands for has just committed alone, so it is handed over now.
func (s *Session) AfterCommit(ctx context.Context, item any) {
	if s.after == nil {
		s.runAfterCommit(ctx, &afterCommit{items: []any{item}})
		return
	}
	s.after.items = append(s.after.items, item)
}

// runAfterCommit hands committed items to the installed func, if any.
func (s *Session) runAfterCommit(ctx context.Context, w *afterCommit) {
	if s.onCommit != nil && len(w.items) > 0 {
		s.onCommit(ctx, w.items)
	}
}
