package model

import (
	"context"

	"orderflow/model/sqlexec"
)

// A transaction's fire-and-forget statements — an event row, the stock flow
// of a new order, a counter release — are held by the engine to travel with
// the transaction's next statement whose answer is needed, or with its
// COMMIT (sqlexec's held.go); on SQLite they run at once.
//
// The naming rule: an exported write that may wait there ends in Later
// (InsertEventLater, InsertOutboxLater, MoveOrderOrAbortLater…), so a reader
// sees that it has not reached the database when it returns, and that its
// failure may surface at the transaction's next statement or at COMMIT. A
// write without the suffix runs when called.

// ErrUnmet fails a transaction in which a statement sent with an
// expectation (laterExpect) found it unmet; nothing the transaction wrote
// stays. The error wraps it and names the check ("order O… paid→claimed
// (claim token)"): test it with errors.Is.
var ErrUnmet = sqlexec.ErrUnmet

// later runs query now, or — inside a MySQL transaction — with the next
// statement. Use it only where the caller needs neither the result nor a
// unique-key violation as an answer; its arguments must be plain values
// (IN (?, …), not IN ? with a slice).
func (s *Store) later(ctx context.Context, query string, args ...any) error {
	return s.x.Later(ctx, query, args...)
}

// laterExpect is later for a statement that must touch at least n rows,
// else the transaction fails with ErrUnmet naming check.
func (s *Store) laterExpect(ctx context.Context, check string, n int64, query string, args ...any) error {
	return s.x.LaterExpect(ctx, check, n, query, args...)
}

// laterExpectExactly is laterExpect for a statement that must touch exactly
// n rows: fewer or more fails the transaction.
func (s *Store) laterExpectExactly(ctx context.Context, check string, n int64, query string, args ...any) error {
	return s.x.LaterExpectExactly(ctx, check, n, query, args...)
}
