//go:build cluster

// The Redis Cluster suite is heavy (three extra redis-servers, 60 orders
// through two workers); it runs with `make test-cluster`.

package operations

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"orderflow/internal/infra/stock"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"

	"github.com/redis/go-redis/v9"
)

// The end-to-end activation on a local 3-master Redis Cluster with two
// workers: 60 orders over card, subscription and recharge products all end
// finished with their effect applied once; two unpaid orders close at their
// expiry (the stock restore script, two keys under one hash tag, runs on the
// cluster) and a late payment on one of them is refunded.
func TestClusterEndToEndActivation(t *testing.T) {
	rc := testenv.StartRedisCluster(t, 3)
	const ttl = 4 * time.Second
	s := testenv.Start(t, testenv.Options{Configure: func(c *svc.Config) {
		c.RedisMode, c.RedisAddr, c.RedisDB = "cluster", rc.SeedList(), 0
		c.OrderTTL = svc.Duration(ttl)
	}})
	second := s.StartWorker(t)
	ctx := context.Background()
	if info, err := s.SC.Redis.ClusterInfo(ctx).Result(); err != nil {
		t.Fatalf("the stack's Redis client is not talking to a cluster: %v", err)
	} else {
		t.Logf("cluster seeds %s: %.40q…", rc.SeedList(), info)
	}

	const (
		perKind = 20
		credit  = 700
		days    = 7
	)
	cardID := s.NewProduct(t, map[string]any{"sku": "cl-card", "kind": "card", "price_cents": 300})
	s.AddCards(t, cardID, "CL", perKind+2)
	subID := s.NewProduct(t, map[string]any{"sku": "cl-sub", "kind": "subscription", "price_cents": 990, "days": days})
	rechargeID := s.NewProduct(t, map[string]any{"sku": "cl-recharge", "kind": "recharge", "price_cents": 450, "credit_cents": credit})

	type placed struct {
		kind   string
		userID int64
		order  testenv.OrderView
	}
	var all []placed
	start := time.Now()
	// Each order has its own buyer (so wallets and subscriptions show one
	// order's effect) and is paid as soon as it exists, well inside its TTL.
	for i := range 3 * perKind {
		kind, pid := []string{"card", "subscription", "recharge"}[i%3], []int64{cardID, subID, rechargeID}[i%3]
		u, buyer := s.NewUser(t, fmt.Sprintf("cl-%d", i), 0)
		o := buyer.CreateOrder(t, pid, 1)
		s.PayOrder(t, o, "")
		all = append(all, placed{kind, u.ID, o})
	}
	// Two card orders left unpaid close at their expiry.
	var unpaid []testenv.OrderView
	for i := range 2 {
		_, buyer := s.NewUser(t, fmt.Sprintf("cl-unpaid-%d", i), 0)
		unpaid = append(unpaid, buyer.CreateOrder(t, cardID, 1))
	}

	testenv.Eventually(t, 90*time.Second, "all 60 orders finished", func() (bool, error) {
		n := countByStatus(t, s, model.OrderFinished)
		return n == int64(len(all)), fmt.Errorf("%d finished", n)
	})
	finishedBy := time.Now()
	for _, p := range all {
		o := s.CheckFinishedOnce(t, p.order.OrderNo)
		no := o.OrderNo
		var u struct {
			BalanceCents          int64      `json:"balance_cents"`
			SubscriptionExpiresAt *time.Time `json:"subscription_expires_at"`
		}
		if st := s.Admin.Do(t, "GET", fmt.Sprintf("/api/v1/admin/users/%d", p.userID), nil, &u); st != 200 {
			t.Fatalf("get user %d: status %d", p.userID, st)
		}
		switch p.kind {
		case "card":
			if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE order_id = ? AND status = 'SOLD'`, o.ID); n != 1 {
				t.Errorf("order %s: %d keys sold, want 1", no, n)
			}
		case "recharge":
			if n := s.Count(t, `SELECT COUNT(*) FROM wallet_entries WHERE ref = ?`, "order:"+no); n != 1 || u.BalanceCents != credit {
				t.Errorf("order %s: %d wallet entries, balance %d; want 1 entry and %d", no, n, u.BalanceCents, credit)
			}
		case "subscription":
			d := days * 24 * time.Hour
			lo, hi := start.Add(d-time.Second), finishedBy.Add(d+time.Second)
			if e := u.SubscriptionExpiresAt; e == nil || e.Before(lo) || e.After(hi) {
				t.Errorf("order %s: subscription ends %v, want within [%v, %v] (one extension)", no, e, lo, hi)
			}
		}
	}

	// Both workers took part.
	total := 0.0
	for i, addr := range []string{s.Worker.Addr(), second.Addr()} {
		n, _ := value(scrape(t, "http://"+addr+"/metrics"), "orderflow_orders_activated_total")
		t.Logf("worker %d delivered %v orders", i+1, n)
		if n == 0 {
			t.Errorf("worker %d delivered nothing: the fleet did not share the load", i+1)
		}
		total += n
	}
	if total != float64(len(all)) {
		t.Errorf("workers delivered %v orders in all, want %d", total, len(all))
	}

	// The unpaid orders closed; the restore script ran once per order on the
	// cluster (its marker sits beside the counter, same hash tag) and the
	// counter is back to the two recycled keys.
	for _, o := range unpaid {
		s.WaitStatus(t, o.OrderNo, model.OrderClosed, 30*time.Second)
	}
	testenv.Eventually(t, 10*time.Second, "stock counter restored", func() (bool, error) {
		n, ok, err := stock.NewCounter(s.SC.Redis).Get(ctx, cardID)
		return ok && n == 2, fmt.Errorf("counter %d (present %v), err %v", n, ok, err)
	})
	for _, o := range unpaid {
		id := s.OrderRow(t, o.OrderNo).ID
		key := stock.RestoreMarkerKey(cardID, o.OrderNo, model.FlowCloseRestore)
		if n, err := s.SC.Redis.Exists(ctx, key).Result(); err != nil || n != 1 {
			t.Errorf("restore marker %s: exists %d, err %v", key, n, err)
		}
		if n := s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE order_id = ? AND status = 'RECYCLED'`, id); n != 1 {
			t.Errorf("closed order %s: %d keys recycled, want 1", o.OrderNo, n)
		}
	}
	slot := func(k string) int64 { n, _ := s.SC.Redis.ClusterKeySlot(ctx, k).Result(); return n }
	if a, b := slot(stock.Key(cardID)), slot(stock.RestoreMarkerKey(cardID, unpaid[0].OrderNo, model.FlowCloseRestore)); a != b {
		t.Errorf("counter and marker hash to slots %d and %d, want one", a, b)
	}

	// A late payment on a closed order is refunded on the cluster too.
	s.PayOrder(t, unpaid[0], "")
	s.WaitStatus(t, unpaid[0].OrderNo, model.OrderRefunded, 30*time.Second)
	if n := s.Count(t, `SELECT COUNT(*) FROM refunds WHERE order_no = ? AND status = 'succeeded'`, unpaid[0].OrderNo); n != 1 {
		t.Errorf("late payment: %d succeeded refunds, want 1", n)
	}

	// The dashboard works against the cluster.
	st, body, err := get(s.APIURL+"/monitoring/api/queues", func(r *http.Request) { r.SetBasicAuth("ops", s.Config.AdminToken) })
	if err != nil || st != 200 {
		t.Errorf("/monitoring/api/queues on the cluster: status %d, err %v, body %.300q", st, err, body)
	}
	// The keys are spread over the masters: this was a cluster, not one node.
	var sizes []int64
	holding := 0
	for _, addr := range rc.Addrs {
		c := redis.NewClient(&redis.Options{Addr: addr})
		n, err := c.DBSize(ctx).Result()
		c.Close()
		if err != nil {
			t.Fatalf("DBSIZE %s: %v", addr, err)
		}
		sizes = append(sizes, n)
		if n > 0 {
			holding++
		}
	}
	if holding < 2 {
		t.Errorf("keys per master %v: want them spread over at least two", sizes)
	}
	t.Logf("60 orders finished in %v on the cluster; keys per master %v", finishedBy.Sub(start).Round(time.Millisecond), sizes)
}
