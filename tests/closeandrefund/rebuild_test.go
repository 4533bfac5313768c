package closeandrefund

import (
	"context"
	"sync"
	"testing"

	"orderflow/internal/testenv"
	"orderflow/svc"
)

// Reconciliation rebuilds the stock counters while the shop is open. A close
// that commits just before the rebuild reads the ledger and restores Redis
// just after the rebuild wrote the counter must not count twice: the ledger
// count already includes its recycled key, so its marker-guarded INCRBY on
// top of the rebuilt value returns the stock a second time. Nothing repairs
// the counter until the next reconciliation (a day later by default).
func TestCounterRebuildBesideCloses(t *testing.T) {
	const (
		keys    = 50
		nBuyers = 8
		batch   = 24 // orders cancelled around each rebuild
		rounds  = 6
	)
	ctx := context.Background()
	// No worker: the only writers of the counter are the API's creates and
	// cancels and the reconciliation pass this test runs.
	s := testenv.Start(t, testenv.Options{NoWorker: true, Configure: func(c *svc.Config) { c.MaxPending = 5 }})
	pid, buyers := cardShop(t, s, "rebuild", 120, keys, nBuyers)

	for round := range rounds {
		orders := make([]created, batch)
		if err := parallel(batch, 6, func(i int) error {
			var err error
			orders[i], err = mustCreate(buyers[i%nBuyers], pid, 1)
			return err
		}); err != nil {
			t.Fatalf("round %d: create: %v", round, err)
		}
		if n, ok, err := counter(s, pid); err != nil || !ok || n != sellable(t, s, pid) {
			t.Fatalf("round %d: before the pass the counter is %d (present %v, err %v), the ledger %d", round, n, ok, err, sellable(t, s, pid))
		}
		// One reconciliation pass, started with the first cancel.
		started := make(chan struct{})
		var once sync.Once
		var passErr error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-started
			_, passErr = s.UC.Reconciler.Run(ctx)
		}()
		err := parallel(batch, 6, func(i int) error {
			once.Do(func() { close(started) })
			return cancelOrder(buyers[i%nBuyers], orders[i].OrderNo)
		})
		wg.Wait()
		if err != nil || passErr != nil {
			t.Fatalf("round %d: cancel %v, reconcile %v", round, err, passErr)
		}
		// Nothing else will touch the counter now.
		n, ok, err := counter(s, pid)
		if err != nil || !ok {
			t.Fatalf("round %d: counter missing (%v)", round, err)
		}
		if db := sellable(t, s, pid); n != db {
			t.Fatalf("round %d: after a reconciliation pass beside %d cancels the counter is %d, the ledger holds %d sellable keys: %d restores counted twice",
				round, batch, n, db, n-db)
		}
	}
}
