//go:build ha

package ha

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"orderflow/internal/domain/order"
	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/ordercache"
	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap/zaptest"
)

// A buyer's view is read through an API on node 2 while a late payment
// commits on node 1. Node 2's applier is held (FLUSH TABLES WITH READ LOCK
// pauses it), as a node a moment behind: the payment's commit and its
// after-commit DEL of the cached view are done before node 2 has applied
// it. The view read then misses the cache, reads node 2 (closed: node 2 is
// behind, as any replica may be), fills the cache and checks the ledger
// again to catch a move committed meanwhile. That check must see the
// payment (it committed before the check began), or the cache keeps
// "closed" for its TTL while the ledger says refunding everywhere.
func TestViewFilledOnALaggingNodeIsNotKeptStale(t *testing.T) {
	ctx := context.Background()
	a, b := node(t, 0), node(t, 1)
	views, rdb := ordersOn(t, b)
	log := zaptest.NewLogger(t)
	a.SetAfterCommit(func(ctx context.Context, w model.AfterCommit) { ordercache.Drop(ctx, rdb, log, w.Orders...) })
	buyer := order.Viewer{UserID: 1}

	o := orderMovedTo(t, a, model.OrderClosed)
	if err := waitStatus(ctx, b, o.OrderNo, model.OrderClosed); err != nil {
		t.Fatal(err)
	}
	if v, err := views.Get(ctx, o.OrderNo, buyer); err != nil || v.Status != "closed" {
		t.Fatalf("first view: %+v, %v; want closed", v, err)
	}
	if n, err := rdb.Exists(ctx, ordercache.KeyNo(o.OrderNo)).Result(); err != nil || n != 1 {
		t.Fatalf("closed view not cached: %d %v", n, err)
	}

	held := holdApplier(t, 1)
	late := time.Now().UTC().Truncate(time.Millisecond)
	if ok, err := a.MoveOrder(ctx, o.ID, o.OrderNo, model.OrderMove{From: model.OrderClosed, To: model.OrderRefunding, Reason: "payment after close", At: late}); !ok || err != nil {
		t.Fatalf("late payment on node 1: %v %v", ok, err)
	}
	if n, _ := rdb.Exists(ctx, ordercache.KeyNo(o.OrderNo)).Result(); n != 0 {
		t.Fatal("the move's after-commit work left the cached view")
	}

	// The read either ends on its own or waits on node 2 for what the
	// cluster committed; either way node 2 may then catch up.
	waited, err := held.runThenRelease(t, func() error {
		_, err := views.Get(ctx, o.OrderNo, buyer)
		return err
	})
	t.Logf("the view read on node 2 waited for the cluster's commits: %v", waited)
	if err != nil {
		t.Fatalf("view on node 2: %v", err)
	}
	if err := waitStatus(ctx, b, o.OrderNo, model.OrderRefunding); err != nil {
		t.Fatal(err)
	}
	v, err := views.Get(ctx, o.OrderNo, buyer)
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != "refunding" {
		t.Errorf("buyer's view on node 2 says %s while the ledger says refunding on every node: a stale view cached for its TTL", v.Status)
	}
}

// ordersOn is the order service of an API whose ledger is node s, with a
// Redis DB of the test's own.
func ordersOn(t *testing.T, s *model.Store) (*order.Service, *redis.Client) {
	rdb := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr(), DB: testenv.RedisDB(t)})
	t.Cleanup(func() { rdb.Close() })
	deps := order.Deps{Store: s, Redis: rdb, Clock: clock.Real{}, Log: zaptest.NewLogger(t)}
	return order.New(deps, order.Settings{CacheTTL: time.Minute}), rdb
}

// appliedHold is a node whose applier is paused by a global read lock.
type appliedHold struct {
	conn *sql.Conn
	db   *sql.DB
	done bool
}

// holdApplier pauses node i's applier: it stops applying what other nodes
// commit (it is desynced, so they go on) until release.
func holdApplier(t *testing.T, i int) *appliedHold {
	t.Helper()
	db, err := sql.Open("mysql", cluster.DSN(i, "orderflow"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "FLUSH TABLES WITH READ LOCK"); err != nil {
		t.Fatal(err)
	}
	h := &appliedHold{conn: conn, db: db}
	t.Cleanup(func() { h.release(t) })
	return h
}

func (h *appliedHold) release(t *testing.T) {
	if h.done {
		return
	}
	h.done = true
	if _, err := h.conn.ExecContext(context.Background(), "UNLOCK TABLES"); err != nil {
		t.Errorf("unlock tables: %v", err)
	}
	h.conn.Close()
	h.db.Close()
}

// runThenRelease runs op (a read or write on the held node) in the
// background until it ends on its own or waits for the cluster's commits,
// then releases the node and returns whether op waited and op's error.
func (h *appliedHold) runThenRelease(t *testing.T, op func() error) (waited bool, err error) {
	t.Helper()
	got := make(chan error, 1)
	go func() { got <- op() }()
	waited, err = readEndsOrWaitsCausally(context.Background(), got, h.conn)
	if err != nil {
		t.Fatal(err)
	}
	h.release(t)
	return waited, <-got
}

// readEndsOrWaitsCausally waits until the read sends its result (put back
// for the caller) or a statement on the node waits with wsrep_sync_wait
// for the cluster's commits (true).
func readEndsOrWaitsCausally(ctx context.Context, got chan error, conn *sql.Conn) (bool, error) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-got:
			got <- err
			return false, nil
		default:
		}
		var n int
		if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%wsrep_sync_wait%' AND ID <> CONNECTION_ID()").Scan(&n); err != nil {
			return false, err
		}
		if n > 0 {
			return true, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false, context.DeadlineExceeded
}
