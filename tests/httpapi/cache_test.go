package httpapi

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"orderflow/internal/domain/order"
	"orderflow/internal/infra/failpoint"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"

	"github.com/google/go-cmp/cmp"
)

// sentinel is what the test writes into the cache keys: not JSON, so a read
// that hit it would fall through to the ledger, and with a long TTL, so only
// a DEL makes it go away within the test.
const sentinel = "sentinel-not-an-order"

// cacheKeys are the order's cache keys as SPEC names them, written out
// rather than taken from ordercache: the test checks the names too.
func cacheKeys(o *model.Order) []string {
	return []string{"cache:order:no:" + o.OrderNo, "cache:order:id:" + strconv.FormatInt(o.ID, 10)}
}

// plantSentinels waits for the worker to stop at the after-claim failpoint
// (armed "1*pause@" the order), writes the sentinels, checks the claim is
// still open, and lets the worker go on. The claim's own cache deletion runs
// in its after-commit work, before the failpoint, so whatever deletes the
// sentinels is the move that ends the claim. (A sleep held the claim before;
// on a loaded box the poll could miss its window.)
func plantSentinels(t *testing.T, s *testenv.Stack, orderNo string) *model.Order {
	t.Helper()
	ctx := context.Background()
	select {
	case <-failpoint.Reached(failpoint.ActivateAfterClaim):
	case <-time.After(20 * time.Second):
		t.Fatalf("order %s never reached %s", orderNo, failpoint.ActivateAfterClaim)
	}
	o := s.OrderRow(t, orderNo)
	if o.Status != model.OrderClaimed || o.ClaimToken == nil {
		t.Fatalf("order %s is %s at the after-claim failpoint, want claimed", orderNo, o.Status)
	}
	for _, k := range cacheKeys(o) {
		if err := s.SC.Redis.Set(ctx, k, sentinel, 5*time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.SC.Redis.Exists(ctx, cacheKeys(o)...).Result(); err != nil || n != 2 {
		t.Fatalf("sentinels not in place: %d keys, err %v", n, err)
	}
	failpoint.Release(failpoint.ActivateAfterClaim)
	return o
}

// waitKeysDeleted polls until neither cache key exists.
func waitKeysDeleted(t *testing.T, s *testenv.Stack, o *model.Order, after string) {
	t.Helper()
	testenv.Eventually(t, 5*time.Second, "both cache keys deleted after "+after, func() (bool, error) {
		n, err := s.SC.Redis.Exists(context.Background(), cacheKeys(o)...).Result()
		return err == nil && n == 0, err
	})
}

// TestCacheDeletedAfterFinalize is done-when 6 (finalize): cache entries
// written while an order is claimed are deleted — both keys — by the
// claimed→finished move; a finished order's GET is then served from the
// ledger and cached under both keys with a TTL.
func TestCacheDeletedAfterFinalize(t *testing.T) {
	t.Cleanup(failpoint.Reset)
	s := testenv.Start(t, testenv.Options{})
	ctx := context.Background()
	pid := s.NewCardProduct(t, "cache-card", 300, 2)
	_, buyer := s.NewUser(t, "cache-buyer", 0)
	o := buyer.CreateOrder(t, pid, 1)
	if err := failpoint.Enable(failpoint.ActivateAfterClaim, "1*pause@"+o.OrderNo); err != nil {
		t.Fatal(err)
	}
	if _, st, err := s.Pay.Pay(ctx, o.OrderNo, o.AmountCents, ""); err != nil || st != 200 {
		t.Fatalf("pay: status %d err %v", st, err)
	}

	row := plantSentinels(t, s, o.OrderNo)
	s.WaitStatus(t, o.OrderNo, model.OrderFinished, 10*time.Second)
	waitKeysDeleted(t, s, row, "finalize")
	if diff := cmp.Diff(happyPath, s.Moves(t, o.OrderNo)); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}

	// A finished order is at rest: its GET is served and then cached.
	var first order.View
	if st := buyer.Do(t, "GET", "/api/v1/orders/"+o.OrderNo, nil, &first); st != 200 {
		t.Fatalf("GET finished order: status %d", st)
	}
	if first.Status != "finished" || len(first.Cards) != 1 {
		t.Fatalf("GET finished order: status %s cards %v", first.Status, first.Cards)
	}
	for _, k := range cacheKeys(row) {
		ttl, err := s.SC.Redis.TTL(ctx, k).Result()
		if err != nil || ttl <= 0 || ttl > s.Config.CacheTTL.D() {
			t.Errorf("cache key %s TTL = %v (err %v), want in (0, %v]", k, ttl, err, s.Config.CacheTTL.D())
			continue
		}
		raw, err := s.SC.Redis.Get(ctx, k).Bytes()
		var cached order.View
		if err != nil || json.Unmarshal(raw, &cached) != nil {
			t.Errorf("cache key %s holds %q (err %v), want the order view", k, raw, err)
			continue
		}
		if diff := cmp.Diff(first, cached); diff != "" {
			t.Errorf("cache key %s differs from the served view (-served +cached):\n%s", k, diff)
		}
	}
	var again order.View
	if st := buyer.Do(t, "GET", "/api/v1/orders/"+o.OrderNo, nil, &again); st != 200 || !cmp.Equal(first, again) {
		t.Errorf("second GET (from the cache): status %d, differs: %s", st, cmp.Diff(first, again))
	}
}

// TestCacheDeletedAfterRelease is done-when 6 (release): when delivery fails
// the claim is released (claimed→paid) and both cache keys are deleted by
// that move; the retry then finishes the order on its second attempt.
func TestCacheDeletedAfterRelease(t *testing.T) {
	t.Cleanup(failpoint.Reset)
	// The retry waits long enough that the release's deletion is seen
	// before the second claim could delete the keys itself.
	const retryDelay = 3 * time.Second
	s := testenv.Start(t, testenv.Options{Configure: func(c *svc.Config) {
		c.ActivateRetryDelay = svc.Duration(retryDelay)
		c.ClaimTimeout = svc.Duration(30 * time.Second) // no stuck-claim recovery in the way
		c.ActivateTimeout = svc.Duration(10 * time.Second)
	}})
	ctx := context.Background()
	pid := s.NewProduct(t, map[string]any{"sku": "release-topup", "kind": "recharge", "price_cents": 400, "credit_cents": 450})
	u, buyer := s.NewUser(t, "release-buyer", 0)
	o := buyer.CreateOrder(t, pid, 1)
	for name, action := range map[string]string{
		failpoint.ActivateAfterClaim: "1*pause@" + o.OrderNo,
		failpoint.ActivateDeliver:    "1*error@" + o.OrderNo,
	} {
		if err := failpoint.Enable(name, action); err != nil {
			t.Fatal(err)
		}
	}
	if _, st, err := s.Pay.Pay(ctx, o.OrderNo, o.AmountCents, ""); err != nil || st != 200 {
		t.Fatalf("pay: status %d err %v", st, err)
	}

	row := plantSentinels(t, s, o.OrderNo)
	waitKeysDeleted(t, s, row, "release")
	// Only the release can have deleted them: the retry has not claimed yet.
	released := []string{"-→pending", "pending→paid", "paid→claimed", "claimed→paid"}
	if diff := cmp.Diff(released, s.Moves(t, o.OrderNo)); diff != "" {
		t.Fatalf("history when the keys were gone (-want +got):\n%s", diff)
	}
	if st := s.OrderRow(t, o.OrderNo).Status; st != model.OrderPaid {
		t.Fatalf("status after release = %s, want paid", st)
	}

	s.WaitStatus(t, o.OrderNo, model.OrderFinished, 10*time.Second+retryDelay)
	var admin order.AdminView
	if st := s.Admin.Do(t, "GET", "/api/v1/admin/orders/"+o.OrderNo, nil, &admin); st != 200 {
		t.Fatalf("admin GET: status %d", st)
	}
	var history []string
	for _, e := range admin.Events {
		history = append(history, e.FromStatus+"→"+e.ToStatus)
	}
	want := slices.Concat(released, []string{"paid→claimed", "claimed→finished"})
	if admin.Status != "finished" || admin.Attempts != 2 {
		t.Errorf("admin view: status %s attempts %d, want finished 2", admin.Status, admin.Attempts)
	}
	if diff := cmp.Diff(want, history); diff != "" {
		t.Errorf("admin event history (-want +got):\n%s", diff)
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM order_effects WHERE order_id = ?`, row.ID); n != 1 {
		t.Errorf("order_effects = %d, want 1", n)
	}
	if bal := s.Count(t, `SELECT balance_cents FROM users WHERE id = ?`, u.ID); bal != 450 {
		t.Errorf("balance = %d, want 450 (credited once)", bal)
	}
}
