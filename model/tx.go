package model

import (
	"context"

	"orderflow/model/sqlexec"

	"go.opentelemetry.io/otel/trace"
)

// TxRetries is how many transactions this process has re-run after a
// deadlock, lock wait timeout, Galera certification failure or a node that
// was not ready: the HA suite shows a conflict between two nodes this way.
func TxRetries() int64 { return sqlexec.Retries() }

// InTx runs fn in one transaction on a Store bound to it (sqlexec's InTx:
// a lost deadlock re-runs fn; called inside a transaction, fn joins it).
// Once the outermost transaction has committed, the work its writes
// registered (aftercommit.go) runs, exactly once.
func (s *Store) InTx(ctx context.Context, fn func(tx *Store) error) error {
	return s.x.InTx(ctx, func(x *sqlexec.Session) error {
		if x == s.x { // joined a MySQL transaction: the same Store
			return fn(s)
		}
		return fn(s.on(x))
	})
}

// SetTracer makes each transaction a "ledger.tx" span of t (svc passes
// orderflow's tracer when tracing is on). Call it once, before the Store is
// shared.
func (s *Store) SetTracer(t trace.Tracer) { s.x.SetTracer(t) }
