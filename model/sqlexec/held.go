package sqlexec

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"
)

// held is a transaction's fire-and-forget statements — an event row, the
// stock flow of a new order, a counter release — kept back to travel in the
// same round trip as the transaction's next statement whose answer is needed,
// or with its COMMIT. The transaction's own START TRANSACTION waits the same
// way for its first statement (see tx.go). MySQL runs a multi-statement
// batch in order and stops at the first error (which fails the transaction,
// as before); the answer (rows affected, insert id, the rows of a SELECT) is
// the last statement's, the one the caller asked about. SQLite is
// in-process: there statements run at once.
//
// The naming rule: a write that may wait here is sent with Later or
// LaterExpect, and a caller that wraps one names its own write …Later too,
// so a reader sees that it has not reached the database when it returns,
// and that its failure may surface at the transaction's next statement or at
// COMMIT. A write sent with Exec runs when called.
type held struct {
	queries []string
	args    []any
	begin   bool // START TRANSACTION not sent yet: it goes with the first statement
	open    bool // START TRANSACTION sent, COMMIT or ROLLBACK not yet
}

// Later runs query now, or — inside a MySQL transaction — with the next
// statement. Use it only where the caller needs neither the result nor a
// unique-key violation as an answer. Its arguments must be plain values:
// a held statement may travel with one that is sent without gorm, which
// would not expand a slice for `IN ?`.
func (s *Session) Later(ctx context.Context, query string, args ...any) error {
	for _, a := range args {
		if _, bytes := a.([]byte); !bytes && a != nil {
			if k := reflect.TypeOf(a).Kind(); k == reflect.Slice || k == reflect.Array {
				panic("sqlexec: Later: write IN (?, …) for a held statement, not IN ? with a slice")
			}
		}
	}
	if s.held == nil {
		_, err := s.Exec(ctx, query, args...)
		return err
	}
	s.held.queries = append(s.held.queries, query)
	s.held.args = append(s.held.args, args...)
	return nil
}

// withHeld puts the waiting statements (and a waiting START TRANSACTION)
// before query and empties the batch.
func (s *Session) withHeld(query string, args []any) (string, []any) {
	h := s.held
	if h == nil {
		return query, args
	}
	queries := h.queries
	if h.begin {
		queries = append([]string{"START TRANSACTION"}, queries...)
		h.begin, h.open = false, true
	}
	if len(queries) == 0 {
		return query, args
	}
	q := strings.Join(append(queries, query), ";\n")
	a := append(h.args, args...)
	h.queries, h.args = nil, nil
	return q, a
}

// Flush sends the held statements on their own, before a statement whose
// unique-key violation is an answer and so must be its own. A waiting START
// TRANSACTION is not flushed: it cannot fail that way and rides along.
func (s *Session) Flush(ctx context.Context) error {
	if s.held == nil || len(s.held.queries) == 0 {
		return nil
	}
	h := s.held
	q, a := strings.Join(h.queries, ";\n"), h.args
	h.queries, h.args = nil, nil
	q, a = s.withHeld(q, a) // a waiting START TRANSACTION goes first
	return s.db.WithContext(ctx).Exec(s.d.block(q), a...).Error
}

// ErrUnmet fails a transaction in which a statement sent with an expectation
// (LaterExpect: "touches at least n rows") found it unmet. The transaction
// is rolled back; nothing it wrote stays. The failure may surface at a later
// statement or at commit, wherever the held statement traveled. The error
// returned wraps it and names the check ("order O… paid→claimed (claim
// token)"): test it with errors.Is.
var ErrUnmet = errors.New("unmet check, transaction rolled back")

// unmetPrefix starts the SIGNAL text that marks ErrUnmet on MariaDB; the
// check's name follows it.
const unmetPrefix = "sqlexec unmet: "

// maxCheckName keeps the SIGNAL text within MESSAGE_TEXT's 128 characters.
const maxCheckName = 128 - len(unmetPrefix)

// LaterExpect is Later for a statement whose outcome decides whether the
// transaction may commit: it must touch at least n rows, else the
// transaction fails with ErrUnmet naming check. On MariaDB the check travels
// with the statement — `IF ROW_COUNT() < n THEN SIGNAL …` stops the batch
// before anything after it, the COMMIT included — so the statement, the ones
// held after it and the COMMIT still share one round trip. Elsewhere it runs
// at once and is checked here.
func (s *Session) LaterExpect(ctx context.Context, check string, n int64, query string, args ...any) error {
	return s.laterCheck(ctx, check, n, false, query, args...)
}

// LaterExpectExactly is LaterExpect for a statement that must touch exactly
// n rows: fewer or more fails the transaction.
func (s *Session) LaterExpectExactly(ctx context.Context, check string, n int64, query string, args ...any) error {
	return s.laterCheck(ctx, check, n, true, query, args...)
}

func (s *Session) laterCheck(ctx context.Context, check string, n int64, exact bool, query string, args ...any) error {
	for len(check) > maxCheckName { // whole characters: bytes bound them
		_, size := utf8.DecodeLastRuneInString(check)
		check = check[:len(check)-size]
	}
	if s.held != nil && s.d.MariaDB {
		// A literal in the statement's text: quotes escaped, and no ? that
		// would be taken for a placeholder.
		quoted := strings.NewReplacer(`\`, `\\`, `'`, `''`, `?`, `.`).Replace(unmetPrefix + check)
		cmp := "<"
		if exact {
			cmp = "<>"
		}
		signal := fmt.Sprintf("IF ROW_COUNT() %s %d THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = '%s'; END IF", cmp, n, quoted)
		return s.Later(ctx, query+";\n"+signal, args...)
	}
	got, err := s.Exec(ctx, query, args...)
	if err == nil && (got < n || exact && got != n) {
		err = fmt.Errorf("%w: %s (%d of %d rows)", ErrUnmet, check, got, n)
	}
	return err
}

// asUnmet turns the SIGNAL of a held check into ErrUnmet naming the check.
func asUnmet(err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1644 && strings.HasPrefix(me.Message, unmetPrefix) {
		return fmt.Errorf("%w: %s", ErrUnmet, strings.TrimPrefix(me.Message, unmetPrefix))
	}
	return err
}
