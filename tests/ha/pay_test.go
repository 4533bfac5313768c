//go:build ha

package ha

import (
	"context"
	"testing"
	"time"

	"orderflow/internal/domain/order"
	"orderflow/internal/infra/clock"
	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap/zaptest"
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
	log := zaptest.NewLogger(t)
	rdb := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr(), DB: testenv.RedisDB(t)})
	t.Cleanup(func() { rdb.Close() })
	a, b := node(t, 0), node(t, 1)
	orders := order.New(order.Deps{Store: b, Redis: rdb, Clock: clock.Real{}, Log: log}, order.Settings{CacheTTL: time.Minute})

	held := holdApplier(t, 1)
	o := orderMovedTo(t, a)
	got := make(chan error, 1)
	go func() {
		_, err := orders.Pay(ctx, order.Payment{OrderNo: o.OrderNo, TradeNo: "T-OUTRUN-" + o.OrderNo, AmountCents: o.AmountCents})
		got <- err
	}()
	waited, err := readEndsOrWaitsCausally(ctx, got, held.conn)
	if err != nil {
		t.Fatal(err)
	}
	held.release(t)
	if err := <-got; err != nil {
		t.Fatalf("payment on node 2 for an order node 1 created (waited for the cluster: %v): %v", waited, err)
	}
	if !waited {
		t.Error("the payment ended without waiting for the cluster's commits while node 2 lagged")
	}
	if err := waitStatus(ctx, a, o.OrderNo, model.OrderPaid); err != nil {
		t.Fatal(err)
	}
}
