package model_test

import (
	"testing"

	"orderflow/model"
)

// Off Galera — one MariaDB server (wsrep compiled in, wsrep_on off), SQLite —
// a causal read is the plain read: nothing to wait for, nothing to fail.
// tests/ha shows the wait on a cluster.
func TestCausalReadsOffGaleraAreThePlainReads(t *testing.T) {
	eachStore(t, func(t *testing.T, bd *bundle) {
		if model.Galera(bd.store) {
			t.Fatal("taken for a Galera node")
		}
		o := bd.order(t, model.OrderClosed)
		got, err := bd.store.Causal().OrderByID(bd.ctx, o.ID)
		if err != nil || got.OrderNo != o.OrderNo || got.Status != model.OrderClosed {
			t.Fatalf("causal OrderByID = %+v, %v; want %s closed", got, err, o.OrderNo)
		}
		if rs, err := bd.store.Causal().RefundsForOrder(bd.ctx, o.ID); err != nil || len(rs) != 0 {
			t.Fatalf("causal RefundsForOrder = %v, %v; want none", rs, err)
		}
	})
}
