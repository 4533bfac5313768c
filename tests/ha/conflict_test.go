//go:build ha

package ha

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"testing"
	"time"

	"orderflow/model"
)

// node opens a Store on Galera node i alone, as a process pinned to it.
func node(t *testing.T, i int) *model.Store {
	t.Helper()
	db, err := model.Open(cluster.DSN(i, "orderflow"), model.PoolConfig{MaxOpen: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s, err := db.DB(); err == nil {
			s.Close()
		}
	})
	return model.NewStore(db)
}

// paidOrder writes a paid order on s, as a fixture.
func paidOrder(t *testing.T, s *model.Store) *model.Order {
	t.Helper()
	return orderMovedTo(t, s, model.OrderPaid)
}

// orderMovedTo writes a pending order on s and moves it through statuses,
// as a fixture.
func orderMovedTo(t *testing.T, s *model.Store, statuses ...model.OrderStatus) *model.Order {
	t.Helper()
	var r [6]byte
	_, _ = rand.Read(r[:])
	now := time.Now().UTC().Truncate(time.Second)
	o := &model.Order{OrderNo: "H" + hex.EncodeToString(r[:]), UserID: 1, ProductID: 1, Kind: model.KindRecharge,
		Quantity: 1, AmountCents: 100, Status: model.OrderPending, CreatedAt: now, UpdatedAt: now, ExpireAt: now.Add(time.Hour)}
	ctx := context.Background()
	if err := s.InsertOrder(ctx, o); err != nil {
		t.Fatal(err)
	}
	for _, to := range statuses {
		if ok, err := s.MoveOrder(ctx, o.ID, o.OrderNo, model.OrderMove{From: o.Status, To: to, Reason: "fixture", At: now}); !ok || err != nil {
			t.Fatalf("fixture %s→%s: %v %v", o.Status, to, ok, err)
		}
		o.Status = to
	}
	return o
}

// Two processes on two nodes claim the same paid order at once. Each runs
// its UPDATE on its own node (both match the row: Galera locks are local),
// then both COMMIT: the second to certify fails with 1213 at COMMIT though
// it never waited for a lock, InTx re-runs it whole, and the re-run sees the
// winner's claim and moves 0 rows. Exactly one claim, one event, one attempt.
func TestCertificationConflictRetriedAsAWhole(t *testing.T) {
	a, b := node(t, 0), node(t, 1)
	ctx := context.Background()
	const rounds = 10
	before := model.TxRetries()
	for round := range rounds {
		o := paidOrder(t, a)
		// The order must be on node b before the race starts.
		if err := waitStatus(ctx, b, o.OrderNo, model.OrderPaid); err != nil {
			t.Fatal(err)
		}
		var ready sync.WaitGroup
		ready.Add(2)
		moved := make([]bool, 2)
		errs := onBothNodes(a, b, func(i int, s *model.Store) error {
			first := true
			return s.InTx(ctx, func(tx *model.Store) error {
				ok, err := tx.MoveOrder(ctx, o.ID, o.OrderNo, model.OrderMove{From: model.OrderPaid, To: model.OrderClaimed,
					Reason: "claim", At: time.Now().UTC(), CountAttempt: true})
				moved[i] = ok
				if first {
					// Both UPDATEs done on their own nodes before either commits.
					first = false
					ready.Done()
					ready.Wait()
				}
				return err
			})
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: node %d: %v", round, i+1, err)
			}
		}
		if moved[0] == moved[1] {
			t.Fatalf("round %d: node 1 moved %v, node 2 moved %v: want exactly one", round, moved[0], moved[1])
		}
		// Nothing doubled: one claim event, one attempt, on every node.
		for i, s := range []*model.Store{a, b, node(t, 2)} {
			if err := waitStatus(ctx, s, o.OrderNo, model.OrderClaimed); err != nil {
				t.Fatal(err)
			}
			got, err := s.OrderByNo(ctx, o.OrderNo)
			if err != nil {
				t.Fatal(err)
			}
			if got.Attempts != 1 {
				t.Errorf("round %d: node %d: attempts %d, want 1", round, i+1, got.Attempts)
			}
			if claims := movesTo(t, s, o.OrderNo, model.OrderClaimed); claims != 1 {
				t.Errorf("round %d: node %d: %d claim events, want 1", round, i+1, claims)
			}
		}
	}
	retried := model.TxRetries() - before
	t.Logf("%d races, %d whole-transaction retries after certification failures", rounds, retried)
	if retried < rounds {
		t.Errorf("%d retries in %d races: every race should have cost the loser one", retried, rounds)
	}
}

// onBothNodes runs move on nodes a (i 0) and b (i 1) at once and returns
// each one's error.
func onBothNodes(a, b *model.Store, move func(i int, s *model.Store) error) []error {
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, s := range []*model.Store{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = move(i, s)
		}()
	}
	wg.Wait()
	return errs
}

// movesTo counts the order's events on s that moved it to status.
func movesTo(t *testing.T, s *model.Store, orderNo string, status model.OrderStatus) int {
	t.Helper()
	evs, err := s.EventsFor(context.Background(), "order", orderNo)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.ToStatus == status.String() {
			n++
		}
	}
	return n
}

// waitStatus polls s (bounded) until the order shows status: what another
// node committed is applied here asynchronously.
func waitStatus(ctx context.Context, s *model.Store, orderNo string, status model.OrderStatus) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		o, err := s.OrderByNo(ctx, orderNo)
		if err == nil && o.Status == status {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("status " + o.Status.String())
			}
			return errors.New("order " + orderNo + " never reached " + status.String() + ": " + err.Error())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The worker's real claim: the move, its event and the SIGNAL check that
// aborts when 0 rows moved are held and sent with COMMIT as one compound
// batch (model/sqlexec/held.go). Raced from two nodes, one commits and the other
// ends ErrUnmet, never a doubled claim.
func TestHeldClaimRacedFromTwoNodes(t *testing.T) {
	a, b := node(t, 0), node(t, 2)
	ctx := context.Background()
	for round := range 20 {
		o := paidOrder(t, a)
		if err := waitStatus(ctx, b, o.OrderNo, model.OrderPaid); err != nil {
			t.Fatal(err)
		}
		errs := onBothNodes(a, b, func(_ int, s *model.Store) error {
			return s.InTx(ctx, func(tx *model.Store) error {
				return tx.MoveOrderOrAbortLater(ctx, o.ID, o.OrderNo, model.OrderMove{From: model.OrderPaid, To: model.OrderClaimed,
					Reason: "claim", At: time.Now().UTC(), CountAttempt: true})
			})
		})
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case errors.Is(err, model.ErrUnmet):
			default:
				t.Fatalf("round %d: node %d: %v", round, i+1, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d claims committed (errors %v), want 1", round, won, errs)
		}
		if err := waitStatus(ctx, b, o.OrderNo, model.OrderClaimed); err != nil {
			t.Fatal(err)
		}
		if got, _ := b.OrderByNo(ctx, o.OrderNo); got.Attempts != 1 {
			t.Fatalf("round %d: attempts %d, want 1", round, got.Attempts)
		}
	}
}
