// Package model owns the ledger: tables, status types with their transition
// table, and every SQL statement orderflow runs. Nothing outside this package
// writes SQL.
//
// Two rules a caller can rely on. A write whose name ends in Later may wait
// inside a transaction for its next round trip (batch.go), so its failure
// can surface at a later statement or at COMMIT. And a transaction collects
// its own after-commit work — the outbox rows it wrote, the orders whose view
// it changed — and hands it over once, after COMMIT (aftercommit.go): a use
// case never sends a task or drops a cached view by hand.
package model

import (
	"context"
	"database/sql"
	"errors"

	sqlite "github.com/glebarez/go-sqlite"
	"github.com/go-sql-driver/mysql"
	"gorm.io/gorm"
)

// ErrNotFound is returned when a looked-up row does not exist.
var ErrNotFound = errors.New("not found")

// Store runs the ledger's SQL, either on the pool or inside one transaction.
type Store struct {
	db   *gorm.DB
	d    dialect
	held *held // inside a MySQL transaction: statements waiting for the next round trip
	// after is, inside a transaction, the work to run once it committed
	// (aftercommit.go); nil on the pool, where each write commits alone.
	after    *AfterCommit
	onCommit AfterCommitFunc
	hooks    WebhookTaskFunc // nil: webhooks off (webhooks.go)
	causal   bool            // reads wait for the cluster's commits (causal.go)
}

// NewStore wraps an open database.
func NewStore(db *gorm.DB) *Store { return &Store{db: db, d: dialectOf(db)} }

// Dialect names the database: "mysql" or "sqlite".
func (s *Store) Dialect() string {
	if s.d.sqlite {
		return "sqlite"
	}
	return "mysql"
}

// DB returns the underlying gorm handle (for health checks and tests).
func (s *Store) DB() *gorm.DB { return s.db }

// insert runs an INSERT and returns the id the database gave the new row,
// from the statement's own result: no second round trip to ask for it.
func (s *Store) insert(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := s.execResult(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// execResult runs a statement (with any held ones before it) and returns the
// driver's result: both the insert id and the rows affected.
func (s *Store) execResult(ctx context.Context, query string, args ...any) (sql.Result, error) {
	query, args = s.withHeld(query, args)
	return s.db.Statement.ConnPool.ExecContext(ctx, s.d.rewrite(query), s.d.args(args)...)
}

// exec runs a statement (with any held ones before it) and returns its
// rows-affected count.
func (s *Store) exec(ctx context.Context, query string, args ...any) (int64, error) {
	query, args = s.withHeld(query, args)
	res := s.db.WithContext(ctx).Exec(s.d.rewrite(query), s.d.args(args)...)
	return res.RowsAffected, res.Error
}

// first scans one row into dst, mapping "no row" to ErrNotFound.
func (s *Store) first(ctx context.Context, dst any, query string, args ...any) error {
	query = s.causalRead(query)
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

func (s *Store) all(ctx context.Context, dst any, query string, args ...any) error {
	query = s.causalRead(query)
	query, args = s.withHeld(query, args)
	return s.db.WithContext(ctx).Raw(s.d.rewrite(query), s.d.args(args)...).Scan(dst).Error
}

// IsDuplicate reports whether err is a unique-key violation.
func IsDuplicate(err error) bool {
	c := sqliteCode(err)
	return mysqlErrno(err) == 1062 || c == sqliteConstraintUnique || c == sqliteConstraintPrimaryKey
}

// isRetryableTxError: MySQL's deadlock victim or lock wait timeout (on
// Galera 1213 is also a certification failure at COMMIT, or a transaction
// aborted by a replicated write it conflicted with), Galera's node not
// ready (its connection is dropped, nodes.go, so the re-run goes to another
// node), or SQLite's busy database (the write lock stayed taken past
// busy_timeout).
func isRetryableTxError(err error) bool {
	n := mysqlErrno(err)
	return n == 1213 || n == 1205 || n == errNotPrimary || sqliteCode(err)&0xff == sqliteBusy
}

// SQLite result codes (https://sqlite.org/rescode.html) the ledger handles.
const (
	sqliteBusy                 = 5
	sqliteConstraintPrimaryKey = 1555
	sqliteConstraintUnique     = 2067
)

// sqliteCode is the extended result code of a SQLite error, or 0.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return 0
}

func mysqlErrno(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// insertIgnoringDuplicate runs an INSERT and reports whether it added a row;
// a unique-key violation means "already there" and is not an error.
func (s *Store) insertIgnoringDuplicate(ctx context.Context, query string, args ...any) (bool, error) {
	// Alone: a violation must be this statement's, not a held one's.
	if err := s.flush(ctx); err != nil {
		return false, err
	}
	_, err := s.exec(ctx, query, args...)
	if IsDuplicate(err) {
		return false, nil
	}
	return err == nil, err
}
