package order_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"orderflow/internal/domain/order"
	"orderflow/internal/infra/failpoint"
	"orderflow/internal/infra/stock"
	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/google/go-cmp/cmp"
)

// closeBundle is a stack with a card product, and what the close tests
// ask of it.
type closeBundle struct {
	s   *testenv.Stack
	ctx context.Context
	pid int64
	n   int
}

func setupClose(t *testing.T, backend testenv.Backend) *closeBundle {
	testenv.LockFailpoints(t)
	t.Cleanup(failpoint.Reset)
	s := testenv.Start(t, testenv.Options{Backend: backend, NoWorker: true}) // nothing closes behind the test
	return &closeBundle{s: s, ctx: context.Background(), pid: s.NewCardProduct(t, "close-tx", 100, 20)}
}

// order creates a pending order of one key for a new buyer; expired puts
// its expiry in the past.
func (b *closeBundle) order(t *testing.T, expired bool) string {
	t.Helper()
	b.n++
	buyer, err := b.s.UC.Accounts.Create(b.ctx, fmt.Sprint("close-buyer-", b.n), 0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.s.UC.Orders.Create(b.ctx, order.CreateRequest{UserID: buyer.ID, ProductID: b.pid, Quantity: 1})
	if err != nil {
		t.Fatal(err)
	}
	if expired {
		if err := b.s.SC.DB.Exec(`UPDATE orders SET expire_at = created_at WHERE order_no = ?`, res.Order.OrderNo).Error; err != nil {
			t.Fatal(err)
		}
	}
	return res.Order.OrderNo
}

// closed reports what the ledger holds of an order's close: its status, its
// moves out of pending, its close-restore flows and its keys still LOCKED.
func (b *closeBundle) closed(t *testing.T, no string) string {
	t.Helper()
	o := b.s.OrderRow(t, no)
	flows := b.s.Count(t, `SELECT COUNT(*) FROM stock_flows WHERE order_id = ? AND flow_type = ?`, o.ID, model.FlowCloseRestore)
	locked := b.s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE order_id = ? AND status = 'LOCKED'`, o.ID)
	events, err := b.s.SC.Store.EventsFor(b.ctx, "order", no)
	if err != nil {
		t.Fatal(err)
	}
	var closes []string
	for _, e := range events {
		if e.FromStatus == model.OrderPending.String() {
			closes = append(closes, e.FromStatus+"→"+e.ToStatus+" ("+e.Reason+")")
		}
	}
	return fmt.Sprintf("%s %v flows=%d locked=%d", o.Status, closes, flows, locked)
}

// counterRight checks the Redis counter against the ledger's sellable keys.
func (b *closeBundle) counterRight(t *testing.T) bool {
	t.Helper()
	n, ok, err := stock.NewCounter(b.s.SC.Redis).Get(b.ctx, b.pid)
	want := b.s.Count(t, `SELECT COUNT(*) FROM card_keys WHERE product_id = ? AND status IN ('UNSOLD', 'RECYCLED')`, b.pid)
	return err == nil && ok && n == want
}

// A buyer's cancel and a close task at the expiry run the one close
// transaction: the failpoint inside it fires for both, and what one fired
// commits nothing; run again, each closes its order with its own reason.
// On both backends: the close's SQL is the same for SQLite, less its locks.
func TestCancelAndExpiryCloseInOneTransaction(t *testing.T) {
	testenv.EachBackend(t, cancelAndExpiryClose)
}

func cancelAndExpiryClose(t *testing.T, backend testenv.Backend) {
	b := setupClose(t, backend)
	cancelled, expired := b.order(t, false), b.order(t, true)
	for _, tc := range []struct {
		no, reason string
		close      func() error
	}{
		{cancelled, order.CloseCancelled, func() error { return b.s.UC.Orders.Cancel(b.ctx, cancelled, order.Viewer{Admin: true}) }},
		{expired, order.CloseExpired, func() error { return b.s.UC.Orders.Expire(b.ctx, expired) }},
	} {
		if err := failpoint.Enable(failpoint.CloseAfterMove, "1*error@"+tc.no); err != nil {
			t.Fatal(err)
		}
		if err := tc.close(); !errors.Is(err, failpoint.ErrInjected) {
			t.Errorf("%s with the failpoint armed = %v, want it fired", tc.reason, err)
		}
		if got, want := b.closed(t, tc.no), "pending [] flows=0 locked=1"; got != want {
			t.Errorf("%s rolled back: %s, want %s", tc.reason, got, want)
		}
		if err := tc.close(); err != nil {
			t.Errorf("%s: %v", tc.reason, err)
		}
		want := fmt.Sprintf("closed [pending→closed (%s)] flows=1 locked=0", tc.reason)
		if got := b.closed(t, tc.no); got != want {
			t.Errorf("%s: %s, want %s", tc.reason, got, want)
		}
	}
	if !b.counterRight(t) {
		t.Error("the stock counter differs from the ledger's sellable keys")
	}
}

// A failpoint that fires for one order of a batch of three fails that
// order's task alone: the other two close (one by one), it stays pending
// with its key, and its task run again closes it.
func TestFailpointInBatchFailsOnlyItsOrder(t *testing.T) {
	b := setupClose(t, testenv.Shared)
	nos := []string{b.order(t, true), b.order(t, true), b.order(t, true)}
	poison := nos[1]
	if err := failpoint.Enable(failpoint.CloseAfterMove, "error@"+poison); err != nil {
		t.Fatal(err)
	}
	errs := b.s.UC.Orders.CloseBatch(b.ctx, nos...)
	for i, err := range errs {
		if (nos[i] == poison) != errors.Is(err, failpoint.ErrInjected) {
			t.Errorf("task of %s = %v (poison %v)", nos[i], err, nos[i] == poison)
		}
	}
	want := map[string]string{}
	got := map[string]string{}
	for _, no := range nos {
		want[no] = "closed [pending→closed (expired)] flows=1 locked=0"
		got[no] = b.closed(t, no)
	}
	want[poison] = "pending [] flows=0 locked=1"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after the batch (-want +got):\n%s", diff)
	}
	failpoint.Disable(failpoint.CloseAfterMove)
	if errs := b.s.UC.Orders.CloseBatch(b.ctx, poison); errs[0] != nil {
		t.Errorf("the poison order's task run again: %v", errs[0])
	}
	if got, want := b.closed(t, poison), "closed [pending→closed (expired)] flows=1 locked=0"; got != want {
		t.Errorf("poison order: %s, want %s", got, want)
	}
	if !b.counterRight(t) {
		t.Error("the stock counter differs from the ledger's sellable keys")
	}
}

// A close whose Redis restore fails after the commit reports the close and
// the failure; the close run again finds the order closed by someone else
// and repairs the counter, once.
func TestCloseRepairsTheCounterAfterItsCommit(t *testing.T) {
	b := setupClose(t, testenv.Shared)
	for _, reason := range []string{order.CloseReconcile, order.CloseExpired} {
		no := b.order(t, true)
		if err := failpoint.Enable(failpoint.StockRestore, "1*error@"+no); err != nil {
			t.Fatal(err)
		}
		moved, err := b.s.UC.Orders.Close(b.ctx, no, reason)
		if !moved || !errors.Is(err, order.ErrCounterNotRestored) {
			t.Fatalf("%s close with the restore failing = %v, %v; want closed, ErrCounterNotRestored", reason, moved, err)
		}
		if b.counterRight(t) {
			t.Errorf("%s: the counter is right before the repair: the failpoint did not fire", reason)
		}
		for range 2 { // the repair, then a re-run that finds nothing to do
			if moved, err := b.s.UC.Orders.Close(b.ctx, no, reason); moved || err != nil {
				t.Errorf("%s close run again = %v, %v; want not moved, nil", reason, moved, err)
			}
			if !b.counterRight(t) {
				t.Errorf("%s: the stock counter differs from the ledger after the re-run", reason)
			}
		}
		if got, want := b.closed(t, no), fmt.Sprintf("closed [pending→closed (%s)] flows=1 locked=0", reason); got != want {
			t.Errorf("%s: %s, want %s", reason, got, want)
		}
	}
}
