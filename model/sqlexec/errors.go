package sqlexec

import (
	"errors"

	sqlite "github.com/glebarez/go-sqlite"
	"github.com/go-sql-driver/mysql"
)

// IsDuplicate reports whether err is a unique-key violation.
func IsDuplicate(err error) bool {
	c := sqliteCode(err)
	return mysqlErrno(err) == 1062 || c == sqliteConstraintUnique || c == sqliteConstraintPrimaryKey
}

// isRetryable reports whether err lost its transaction to another one, so
// that re-running the whole transaction is safe: MySQL's deadlock victim or
// lock wait timeout (on Galera 1213 is also a certification failure at
// COMMIT, or a transaction aborted by a replicated write it conflicted
// with), Galera's node not ready (its connection is dropped, nodes.go, so
// the re-run goes to another node), or SQLite's busy database (the write
// lock stayed taken past busy_timeout).
func isRetryable(err error) bool {
	n := mysqlErrno(err)
	return n == 1213 || n == 1205 || n == errNotPrimary || sqliteCode(err)&0xff == sqliteBusy
}

// lostAlone reports whether a statement run alone on the pool (its own
// transaction) lost to another transaction before taking effect, so that
// running it again is running it once: a deadlock's victim, or on Galera a
// certification failure or an abort by a replicated write it conflicted
// with (1213), or a node not ready. Not a lock wait timeout (1205) or
// SQLite's busy database: those already waited their whole timeout, and a
// re-run would wait it again.
func lostAlone(err error) bool {
	n := mysqlErrno(err)
	return n == 1213 || n == errNotPrimary
}

// SQLite result codes (https://sqlite.org/rescode.html) the engine handles.
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
