package sqlexec

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"
)

// maxTxAttempts bounds how often a transaction that lost a deadlock is re-run:
// InnoDB picks a victim and rolls it back whole, so re-running is safe, but an
// unbounded loop would hide a real locking bug.
const maxTxAttempts = 4

// txRetries counts transactions and lone statements re-run after a loss.
var txRetries atomic.Int64

// Retries is how many transactions (and lone statements) this process has
// re-run after a deadlock, lock wait timeout, Galera certification failure
// or a node that was not ready: the HA suite shows a conflict between two
// nodes this way.
func Retries() int64 { return txRetries.Load() }

// InTx runs fn in one transaction on a Session bound to it. A deadlock or
// lock wait timeout rolls back and re-runs fn, at most maxTxAttempts times.
// Called on a Session that is already inside a transaction, fn joins it (on
// MySQL it gets s itself; on SQLite a Session under a savepoint). Once the
// outermost transaction has committed, the items its writes registered
// (aftercommit.go) are handed over, exactly once.
func (s *Session) InTx(ctx context.Context, fn func(tx *Session) error) error {
	if s.held != nil {
		return asUnmet(fn(s))
	}
	if s.after != nil {
		return s.nestedSQLiteTx(ctx, fn)
	}
	if s.tracer != nil {
		var span trace.Span
		ctx, span = s.tracer.Start(ctx, "ledger.tx", trace.WithAttributes(attribute.String("db.system.name", s.d.Name())))
		defer span.End()
	}
	return retry(ctx, isRetryable, func() error {
		work := &afterCommit{} // a rolled-back attempt's items are dropped with it
		var err error
		if s.d.SQLite {
			err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
				return fn(s.bound(tx, nil, work))
			})
		} else {
			err = s.mysqlTx(ctx, work, fn)
		}
		if err == nil {
			s.runAfterCommit(ctx, work)
		}
		return err
	})
}

// retry runs attempt, and again after it lost to another transaction (as
// lost says), at most maxTxAttempts times: a whole transaction (InTx,
// isRetryable), or one statement alone on the pool (Exec, lostAlone).
func retry(ctx context.Context, lost func(error) bool, attempt func() error) error {
	for n := 1; ; n++ {
		err := attempt()
		if err == nil || !lost(err) || ctx.Err() != nil || n == maxTxAttempts {
			return err
		}
		txRetries.Add(1)
		time.Sleep(time.Duration(n*n) * 5 * time.Millisecond)
	}
}

// bound is s on a transaction's handle, collecting into work.
func (s *Session) bound(db *gorm.DB, h *held, work *afterCommit) *Session {
	return &Session{db: db, d: s.d, held: h, after: work, onCommit: s.onCommit}
}

// nestedSQLiteTx runs fn under a savepoint of the SQLite transaction s is
// in. Its after-commit items join the outer transaction's; if the savepoint
// rolls back, so do the items it added.
func (s *Session) nestedSQLiteTx(ctx context.Context, fn func(tx *Session) error) error {
	work := s.after
	n := len(work.items)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return fn(s.bound(tx, nil, work))
	})
	if err != nil {
		work.items = work.items[:n]
	}
	return err
}

// mysqlTx runs fn in a transaction on one connection, driven by statements
// instead of database/sql's Begin and Commit so that neither costs a round
// trip of its own: START TRANSACTION goes with the first statement and
// COMMIT with the held statements (held.go). The session's isolation (READ
// COMMITTED, set at connect) applies. Whatever fn does, the connection goes
// back to the pool with no transaction open, or not at all.
func (s *Session) mysqlTx(ctx context.Context, work *afterCommit, fn func(tx *Session) error) (err error) {
	pool, err := s.db.DB()
	if err != nil {
		return err
	}
	conn, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	db := s.db.Session(&gorm.Session{Context: ctx})
	db.Statement.ConnPool = conn
	tx := s.bound(db, &held{begin: true}, work)
	defer func() {
		if tx.held.open {
			// fn failed or panicked, or the commit did not go through.
			tx.rollback(conn)
		}
		conn.Close()
	}()
	if err = fn(tx); err == nil {
		err = tx.commit(ctx)
	}
	return asUnmet(err)
}

// commit sends the held statements and COMMIT in one round trip. A
// transaction that never ran a statement has nothing to commit.
func (s *Session) commit(ctx context.Context) error {
	h := s.held
	if h.begin && len(h.queries) == 0 {
		h.begin = false
		return nil
	}
	q, a := s.withHeld("COMMIT", nil)
	// Not cancelled with the caller: the driver would close the socket, but
	// the server may still finish the batch, COMMIT included, and a
	// committed transaction would be reported as failed (a payment answered
	// with an error, a created order's stock given back). Like database/sql's
	// Commit, it waits for the server's answer.
	if err := s.db.WithContext(context.WithoutCancel(ctx)).Exec(s.d.block(q), a...).Error; err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	h.open = false
	return nil
}

// rollbackTimeout bounds the ROLLBACK of a failed transaction; its context
// is not the caller's, which may be what failed it.
const rollbackTimeout = 5 * time.Second

// rollback ends an open transaction. If even that fails, the connection is
// closed instead of pooled: the server rolls back a session that ends.
func (s *Session) rollback(conn *sql.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), rollbackTimeout)
	defer cancel()
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	s.held.open = false
}
