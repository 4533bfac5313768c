//go:build ha

package ha

import (
	"context"
	"testing"

	"orderflow/internal/domain/order"
	"orderflow/model"
)

// A provider's notification can outrun the create's replication: the order
// is created through an API on node 1 and its payment notification reaches
// an API on node 2 a few milliseconds later, before node 2 has applied the
// create (held here: node 2's applier paused). The payment's transaction
// reads no order there — Galera does not wait inside a transaction — and
// answering 404 would tell the provider the order does not exist (the chaos
// run on Galera met exactly that). The payment must wait for the cluster's
// commits and pay the order.
func TestPaymentOutrunningTheCreatesReplicationPays(t *testing.T) {
	ctx := context.Background()
	a, b := node(t, 0), node(t, 1)
	orders, _ := ordersOn(t, b)

	held := holdApplier(t, 1)
	o := orderMovedTo(t, a)
	waited, err := held.runThenRelease(t, func() error {
		_, err := orders.Pay(ctx, order.Payment{OrderNo: o.OrderNo, TradeNo: "T-OUTRUN-" + o.OrderNo, AmountCents: o.AmountCents})
		return err
	})
	if err != nil {
		t.Fatalf("payment on node 2 for an order node 1 created (waited for the cluster: %v): %v", waited, err)
	}
	if !waited {
		t.Error("the payment ended without waiting for the cluster's commits while node 2 lagged")
	}
	if err := waitStatus(ctx, a, o.OrderNo, model.OrderPaid); err != nil {
		t.Fatal(err)
	}
}
