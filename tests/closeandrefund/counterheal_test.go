package closeandrefund

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"orderflow/internal/domain/order"
	"orderflow/internal/infra/failpoint"
	"orderflow/internal/infra/stock"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"
)

// The Redis stock counter only answers "sold out" fast; the ledger decides.
// These tests put the counter below the ledger the ways issue 13 found and
// show buyers still get the keys on sale.

// forceCounter sets a product's Redis counter, as a fault would leave it.
func forceCounter(t testing.TB, s *testenv.Stack, productID, n int64) {
	t.Helper()
	if err := s.SC.Redis.Set(context.Background(), stock.Key(productID), n, 0).Err(); err != nil {
		t.Fatal(err)
	}
}

// A counter forced to 0 while 10 keys are on sale sells all 10 on the next
// creates, and the 11th is out of stock.
func TestCounterForcedToZeroSellsTheKeysOnSale(t *testing.T) {
	const keys = 10
	s := testenv.Start(t, testenv.Options{NoWorker: true, Configure: func(c *svc.Config) { c.MaxPending = keys + 1 }})
	pid, buyers := cardShop(t, s, "forced-zero", 100, keys, 1)
	buyer := buyers[0]
	forceCounter(t, s, pid, 0)
	for i := range keys {
		res, err := tryCreate(buyer, pid, 1)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != 201 {
			t.Fatalf("create %d of %d: %d %s while the ledger holds %d sellable keys", i+1, keys, res.Status, res.Code, sellable(t, s, pid))
		}
	}
	res, err := tryCreate(buyer, pid, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 409 || res.Code != "out_of_stock" {
		t.Fatalf("create %d with every key locked: %d %s, want 409 out_of_stock", keys+1, res.Status, res.Code)
	}
}

// Window 1: an API process dies between its Redis take and its database
// commit. The take stays counted, no order row gives it back. Buyers still
// get every key (the ledger is asked), and once the gap has lasted a check
// interval the counter is repaired.
func TestCounterHealsAfterATakeThatNeverCommitted(t *testing.T) {
	const keys = 60
	ctx := context.Background()
	s := testenv.Start(t, testenv.Options{NoWorker: true, Configure: func(c *svc.Config) { c.MaxPending = keys }})
	pid, buyers := cardShop(t, s, "dead-take", 100, keys, 1)
	buyer := buyers[0]
	forceCounter(t, s, pid, keys)
	// The dying process's take of every key: counted in Redis, never committed.
	if out, err := stock.NewCounter(s.SC.Redis).Take(ctx, pid, "dead-process", keys); err != nil || out != stock.Taken {
		t.Fatalf("take: %v %v", out, err)
	}
	start := time.Now()
	created := 0
	testenv.Eventually(t, 4*order.ShortCheckInterval, "the counter repaired from the ledger", func() (bool, error) {
		res, err := tryCreate(buyer, pid, 1)
		if err != nil {
			return false, err
		}
		if res.Status != 201 {
			t.Fatalf("create %d after a take that never committed: %d %s; the ledger holds %d sellable keys",
				created+1, res.Status, res.Code, sellable(t, s, pid))
		}
		created++
		n, ok, err := counter(s, pid)
		return err == nil && ok && n == sellable(t, s, pid), fmt.Errorf("counter %d (present %v, err %v), ledger %d", n, ok, err, sellable(t, s, pid))
	})
	t.Logf("%d creates sold by the ledger; counter repaired after %v", created, time.Since(start).Round(time.Millisecond))
}

// Window 2: Redis fails right after a close commits. The close task must not
// complete with the stock still missing from the counter; a buyer's cancel
// still succeeds (the close committed) and the order's close task, due at
// its expiry, gives the stock back.
func TestCloseRestoreFailureIsRunAgain(t *testing.T) {
	const keys = 3
	s := testenv.Start(t, testenv.Options{Configure: func(c *svc.Config) { c.OrderTTL = svc.Duration(time.Second) }})
	t.Cleanup(failpoint.Reset)
	pid, buyers := cardShop(t, s, "restore-fails", 100, keys, 2)

	expired, err := mustCreate(buyers[0], pid, 1)
	if err != nil {
		t.Fatal(err)
	}
	cancelled, err := mustCreate(buyers[1], pid, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := failpoint.EnableSpec(failpoint.StockRestore + "=1*error@" + cancelled.OrderNo); err != nil {
		t.Fatal(err)
	}
	if err := cancelOrder(buyers[1], cancelled.OrderNo); err != nil {
		t.Fatalf("cancel whose Redis restore failed: %v (the close committed: the buyer must see it done)", err)
	}
	if err := failpoint.EnableSpec(failpoint.StockRestore + "=1*error@" + expired.OrderNo); err != nil {
		t.Fatal(err)
	}
	s.WaitStatus(t, expired.OrderNo, model.OrderClosed, 15*time.Second)
	// No create runs: only the close tasks can bring the counter back.
	waitCountersMatch(t, s, 15*time.Second, pid)
}

// Window 3: a counter rebuild (after Redis lost the counter) reads the
// ledger, a close commits and restores — onto the missing counter, so it
// adds nothing — and then the rebuild writes the count it read before the
// close. The restored key would be missing from the counter.
func TestCounterRebuildBesideARestore(t *testing.T) {
	const keys = 5
	ctx := context.Background()
	s := testenv.Start(t, testenv.Options{NoWorker: true})
	t.Cleanup(failpoint.Reset)
	pid, buyers := cardShop(t, s, "rebuild-race", 100, keys, 2)
	first, err := mustCreate(buyers[0], pid, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SC.Redis.Del(ctx, stock.Key(pid)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := failpoint.EnableSpec(failpoint.StockRebuildRead + "=1*pause@" + strconv.FormatInt(pid, 10)); err != nil {
		t.Fatal(err)
	}
	done := testenv.PausedAt(t, failpoint.StockRebuildRead, 10*time.Second, "the create on a missing counter", func() error {
		_, err := mustCreate(buyers[1], pid, 1)
		return err
	})
	// The rebuild has read the ledger (4 sellable); now the first order closes.
	if err := cancelOrder(buyers[0], first.OrderNo); err != nil {
		t.Fatal(err)
	}
	failpoint.Release(failpoint.StockRebuildRead)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	n, ok, err := counter(s, pid)
	if db := sellable(t, s, pid); err != nil || !ok || n != db {
		t.Fatalf("after a rebuild beside a restore the counter is %d (present %v, err %v), the ledger holds %d sellable keys", n, ok, err, db)
	}
}
