package closeandrefund

import (
	"context"
	"fmt"
	"testing"
	"time"

	"orderflow/internal/domain/order"
	"orderflow/internal/infra/failpoint"
	"orderflow/internal/testenv"
	"orderflow/model"
)

// A buyer's cancel that reaches the API twice — a client or proxy that sent
// the POST again after losing the first answer, a double click — answers
// as the first did: the order is closed by the buyer's cancel, which is what
// both asked for. The second may come after the first, or while the first's
// close holds the order's row, having read the order still pending. Either
// way the order closes once and its keys come back once. An order that left
// pending another way (paid, closed by the expiry or the reconciliation)
// still answers 409 invalid_status.
func TestCancelTwiceAnswersLikeOnce(t *testing.T) {
	testenv.LockFailpoints(t)
	t.Cleanup(failpoint.Reset)
	s := testenv.Start(t, testenv.Options{NoWorker: true})
	pid, buyers := cardShop(t, s, "cancel-twice", 100, 10, 1)
	buyer := buyers[0]
	var dbName string
	if err := s.SC.DB.Raw(`SELECT DATABASE()`).Scan(&dbName).Error; err != nil {
		t.Fatal(err)
	}
	closedOnce := func(t *testing.T, no string) {
		t.Helper()
		if o := s.OrderRow(t, no); o.Status != model.OrderClosed {
			t.Errorf("order %s is %s, want closed", no, o.Status)
		}
		if n := s.MoveCount(t, no, "pending→closed"); n != 1 {
			t.Errorf("order %s moved pending→closed %d times, want once (%v)", no, n, s.Moves(t, no))
		}
		if n := s.Count(t, `SELECT COUNT(*) FROM stock_flows f JOIN orders o ON o.id = f.order_id WHERE o.order_no = ? AND f.flow_type = ?`,
			no, model.FlowCloseRestore); n != 1 {
			t.Errorf("order %s has %d close-restore flows, want 1", no, n)
		}
		if n, ok, err := counter(s, pid); err != nil || !ok || n != sellable(t, s, pid) {
			t.Errorf("stock counter %d (present %v, err %v), the ledger holds %d sellable keys", n, ok, err, sellable(t, s, pid))
		}
	}

	t.Run("one after the other", func(t *testing.T) {
		o, err := mustCreate(buyer, pid, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 2; i++ {
			if err := cancelOrder(buyer, o.OrderNo); err != nil {
				t.Errorf("cancel %d: %v", i, err)
			}
		}
		closedOnce(t, o.OrderNo)
	})

	t.Run("the second while the first holds the row", func(t *testing.T) {
		o, err := mustCreate(buyer, pid, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := failpoint.EnableSpec(failpoint.CloseAfterMove + "=1*pause@" + o.OrderNo); err != nil {
			t.Fatal(err)
		}
		first := testenv.PausedAt(t, failpoint.CloseAfterMove, 10*time.Second, "the first cancel", func() error { return cancelOrder(buyer, o.OrderNo) })
		// The first holds the order's row, its move not committed: the second
		// reads the order pending and waits for the row.
		second := make(chan error, 1)
		go func() { second <- cancelOrder(buyer, o.OrderNo) }()
		testenv.EventuallyEvery(t, 10*time.Second, testenv.InnoDBTrxPoll, "the second cancel waits for the order's row", func() (bool, error) {
			n := s.Count(t, `SELECT COUNT(*) FROM information_schema.INNODB_TRX x
				JOIN information_schema.PROCESSLIST p ON p.ID = x.trx_mysql_thread_id
				WHERE p.DB = ? AND x.trx_state = 'LOCK WAIT'`, dbName)
			return n == 1, fmt.Errorf("%d transactions waiting for a lock", n)
		})
		failpoint.Release(failpoint.CloseAfterMove)
		if err := <-first; err != nil {
			t.Errorf("first cancel: %v", err)
		}
		if err := <-second; err != nil {
			t.Errorf("second cancel: %v", err)
		}
		closedOnce(t, o.OrderNo)
	})

	t.Run("an order that left pending another way", func(t *testing.T) {
		paid, err := mustCreate(buyer, pid, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := payOrder(s, paid.OrderNo, paid.AmountCents, ""); err != nil {
			t.Fatal(err)
		}
		reconciled, err := mustCreate(buyer, pid, 1)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := s.UC.Orders.Close(context.Background(), reconciled.OrderNo, order.CloseReconcile); err != nil || !ok {
			t.Fatalf("reconciliation close: %v %v", ok, err)
		}
		for _, no := range []string{paid.OrderNo, reconciled.OrderNo} {
			var e apiError
			if st := buyer.Do(t, "POST", "/api/v1/orders/"+no+"/cancel", nil, &e); st != 409 || e.Error.Code != "invalid_status" {
				t.Errorf("cancel of %s (%s): %d %q, want 409 invalid_status", no, s.OrderRow(t, no).Status, st, e.Error.Code)
			}
		}
	})
}
