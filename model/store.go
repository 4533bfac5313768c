// Package model owns the ledger: tables, status types with their transition
// table, and every SQL statement orderflow runs. Nothing outside this package
// writes SQL.
//
// The statements run on the SQL engine, package sqlexec: its transactions,
// its held statements and its after-commit list; this package only says
// which statements. Two rules a caller can rely on. A write whose name ends
// in Later may wait inside a transaction for its next round trip (batch.go),
// so its failure can surface at a later statement or at COMMIT. And a transaction collects
// its own after-commit work — the outbox rows it wrote, the orders whose view
// it changed — and hands it over once, after COMMIT (aftercommit.go): a use
// case never sends a task or drops a cached view by hand.
package model

import (
	"context"
	"database/sql"

	"orderflow/model/sqlexec"

	"gorm.io/gorm"
)

// ErrNotFound is returned when a looked-up row does not exist.
var ErrNotFound = sqlexec.ErrNotFound

// Store runs the ledger's SQL, either on the pool or inside one transaction.
type Store struct {
	x *sqlexec.Session // the engine: the pool, or the transaction s is bound to
	d dialect          // x's dialect, for the statements that differ
	// traceparent stamps the rows that carry their request's trace (nil:
	// none); svc installs it.
	traceparent func(context.Context) string
	hooks       *Webhooks // nil: webhooks off (webhooks.go)
	causal      bool      // reads wait for the cluster's commits (causal.go)
}

// NewStore wraps an open database.
func NewStore(db *gorm.DB) *Store {
	x := sqlexec.New(db)
	return &Store{x: x, d: viewOf(x.Dialect())}
}

// on is s on the engine session x (a transaction's, or a snapshot's).
func (s *Store) on(x *sqlexec.Session) *Store {
	return &Store{x: x, d: s.d, traceparent: s.traceparent, hooks: s.hooks}
}

// Dialect names the database: "mysql" or "sqlite".
func (s *Store) Dialect() string { return s.x.Dialect().Name() }

// DB returns the underlying gorm handle (for health checks and tests).
func (s *Store) DB() *gorm.DB { return s.x.DB() }

// IsDuplicate reports whether err is a unique-key violation.
func IsDuplicate(err error) bool { return sqlexec.IsDuplicate(err) }

// The private helpers below are the engine's statements as the ledger's
// files call them.

func (s *Store) insert(ctx context.Context, query string, args ...any) (int64, error) {
	return s.x.Insert(ctx, query, args...)
}

func (s *Store) execResult(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return s.x.ExecResult(ctx, query, args...)
}

func (s *Store) exec(ctx context.Context, query string, args ...any) (int64, error) {
	return s.x.Exec(ctx, query, args...)
}

// first scans one row into dst, mapping "no row" to ErrNotFound.
func (s *Store) first(ctx context.Context, dst any, query string, args ...any) error {
	return s.x.First(ctx, dst, s.causalRead(query), args...)
}

func (s *Store) all(ctx context.Context, dst any, query string, args ...any) error {
	return s.x.All(ctx, dst, s.causalRead(query), args...)
}

func (s *Store) insertIgnoringDuplicate(ctx context.Context, query string, args ...any) (bool, error) {
	return s.x.InsertIgnoringDuplicate(ctx, query, args...)
}

// stamp is ctx's traceparent for a row that carries it, or nil.
func (s *Store) stamp(ctx context.Context, current *string) *string {
	if current != nil || s.traceparent == nil {
		return current
	}
	if tp := s.traceparent(ctx); tp != "" {
		return &tp
	}
	return nil
}

// SetTraceparent installs how a new order or outbox row learns the trace of
// the request that wrote it (svc passes the tracing package's). Call it
// once, before the Store is shared.
func (s *Store) SetTraceparent(fn func(context.Context) string) { s.traceparent = fn }
