package model

import (
	"context"
	"strings"
)

// held is a transaction's fire-and-forget statements — an event row, the
// stock flow of a new order, a counter release — kept back to travel in the
// same round trip as the transaction's next statement whose answer is needed,
// or just before it commits. MySQL runs a multi-statement batch in order and
// stops at the first error (which fails the transaction, as before); the
// answer (rows affected, insert id) is the last statement's, the one the
// caller asked about. SQLite is in-process: there statements run at once.
type held struct {
	queries []string
	args    []any
}

// later runs query now, or — inside a MySQL transaction — with the next
// statement. Use it only where the caller needs neither the result nor a
// unique-key violation as an answer.
func (s *Store) later(ctx context.Context, query string, args ...any) error {
	if s.held == nil {
		_, err := s.exec(ctx, query, args...)
		return err
	}
	s.held.queries = append(s.held.queries, query)
	s.held.args = append(s.held.args, args...)
	return nil
}

// withHeld prefixes the held statements to query and empties the batch.
func (s *Store) withHeld(query string, args []any) (string, []any) {
	if s.held == nil || len(s.held.queries) == 0 {
		return query, args
	}
	q := strings.Join(append(s.held.queries, query), ";\n")
	a := append(s.held.args, args...)
	s.held.queries, s.held.args = nil, nil
	return q, a
}

// flush sends the held statements on their own: before a read (which must
// see them) and before the transaction commits.
func (s *Store) flush(ctx context.Context) error {
	if s.held == nil || len(s.held.queries) == 0 {
		return nil
	}
	q, a := strings.Join(s.held.queries, ";\n"), s.held.args
	s.held.queries, s.held.args = nil, nil
	return s.db.WithContext(ctx).Exec(q, a...).Error
}
