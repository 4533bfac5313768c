// Package sqlexec is the ledger's SQL engine: it runs hand-written MySQL
// statements on MySQL/MariaDB or SQLite through one gorm handle, and owns
// what a transaction is on each of them — START TRANSACTION sent with the
// first statement, fire-and-forget statements held for the next round trip
// or the COMMIT, checks that travel with them, the re-run of a transaction
// that lost a deadlock, and the work that waits for the COMMIT. It knows no
// table: the ledger (package model) gives it statements.
//
// Two rules a caller can rely on. A statement given to Later may wait
// inside a transaction for its next round trip (held.go), so its failure
// can surface at a later statement or at COMMIT. And a transaction collects
// the after-commit items its writes register (aftercommit.go) and hands them
// over once, after COMMIT.
package sqlexec

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"
)

// ErrNotFound is returned by First when the query found no row.
var ErrNotFound = errors.New("not found")

// Session runs statements either on the pool or inside one transaction (the
// Session InTx hands its func).
type Session struct {
	db   *gorm.DB
	d    Dialect
	held *held // inside a MySQL transaction: statements waiting for the next round trip
	// after is, inside a transaction, the items to hand over once it
	// committed (aftercommit.go); nil on the pool, where each write commits
	// alone.
	after    *afterCommit
	snapshot bool // inside Snapshot's read-only transaction
	onCommit AfterCommitFunc
	tracer   trace.Tracer // nil: no span per transaction
}

// New wraps an open database, asking it which dialect it speaks.
func New(db *gorm.DB) *Session { return &Session{db: db, d: DialectOf(db)} }

// Dialect is the database's dialect.
func (s *Session) Dialect() Dialect { return s.d }

// DB returns the underlying gorm handle (for health checks and tests).
func (s *Session) DB() *gorm.DB { return s.db }

// SetTracer makes every outermost transaction a span ("ledger.tx") of t;
// nil, the default, records none. Call it before s is shared, like
// SetAfterCommit.
func (s *Session) SetTracer(t trace.Tracer) { s.tracer = t }

// AsMySQL returns a copy of s that checks LaterExpect's expectations in Go
// and sends held statements as a plain batch, as on a server without
// compound statements (MySQL): tests run that path on MariaDB too.
func (s *Session) AsMySQL() *Session {
	c := *s
	c.d.MariaDB, c.d.Galera = false, false
	return &c
}

// Insert runs an INSERT and returns the id the database gave the new row,
// from the statement's own result: no second round trip to ask for it.
func (s *Session) Insert(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := s.ExecResult(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// ExecResult runs a statement (with any held ones before it) and returns
// the driver's result: both the insert id and the rows affected. Its
// arguments go to the driver as they are (no `IN ?` list expansion: that
// is gorm's, which Exec uses but which keeps no insert id). Alone on
// the pool, a statement that lost to another transaction before taking
// effect is run again (lostAlone).
func (s *Session) ExecResult(ctx context.Context, query string, args ...any) (res sql.Result, err error) {
	query, args = s.withHeld(query, args)
	err = s.write(ctx, query, func() error {
		res, err = s.db.Statement.ConnPool.ExecContext(ctx, s.d.rewrite(query), s.d.args(args)...)
		return err
	})
	return res, err
}

// write runs query once inside a transaction (a loss there re-runs the
// whole transaction: InTx; a snapshot's is rolled back whole), and alone on
// the pool again after it lost to another transaction before taking effect
// (lostAlone). A batch of statements on the pool is run once: each of its
// statements commits on its own, so those before the one that lost already
// took effect.
func (s *Session) write(ctx context.Context, query string, run func() error) error {
	if s.after != nil || s.snapshot || strings.Contains(query, ";") {
		return run()
	}
	return retry(ctx, lostAlone, run)
}

// Exec runs a statement (with any held ones before it) and returns its
// rows-affected count. Alone on the pool, a statement that lost to another
// transaction before taking effect is run again (lostAlone).
func (s *Session) Exec(ctx context.Context, query string, args ...any) (n int64, err error) {
	query, args = s.withHeld(query, args)
	err = s.write(ctx, query, func() error {
		res := s.db.WithContext(ctx).Exec(s.d.rewrite(query), s.d.args(args)...) // gorm expands `IN ?` lists
		n = res.RowsAffected
		return res.Error
	})
	return n, err
}

// First scans one row into dst, mapping "no row" to ErrNotFound.
func (s *Session) First(ctx context.Context, dst any, query string, args ...any) error {
	query, args = s.withHeld(query, args) // the read sees them: they run first
	res := s.db.WithContext(ctx).Raw(s.d.rewrite(query), s.d.args(args)...).Scan(dst)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// All scans every row into dst (a slice).
func (s *Session) All(ctx context.Context, dst any, query string, args ...any) error {
	query, args = s.withHeld(query, args)
	return s.db.WithContext(ctx).Raw(s.d.rewrite(query), s.d.args(args)...).Scan(dst).Error
}

// InsertIgnoringDuplicate runs an INSERT and reports whether it added a
// row; a unique-key violation means "already there" and is not an error.
func (s *Session) InsertIgnoringDuplicate(ctx context.Context, query string, args ...any) (bool, error) {
	// Alone: a violation must be this statement's, not a held one's.
	if err := s.Flush(ctx); err != nil {
		return false, err
	}
	_, err := s.Exec(ctx, query, args...)
	if IsDuplicate(err) {
		return false, nil
	}
	return err == nil, err
}

// Snapshot runs fn in a read-only REPEATABLE READ transaction of its own on
// the pool (on SQLite a read transaction is a snapshot in WAL mode), so
// every read fn makes sees one consistent state. Inside a MySQL transaction
// it fails: its own would begin on that one's connection and implicitly
// commit it.
func (s *Session) Snapshot(ctx context.Context, fn func(tx *Session) error) error {
	if s.held != nil {
		return errors.New("snapshot: not inside another transaction")
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return fn(&Session{db: tx, d: s.d, snapshot: true})
	}, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
}
