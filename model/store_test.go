package model_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"
)

// bundle is one test's ledger: a fresh migrated database.
type bundle struct {
	store *model.Store
	db    *gorm.DB
	ctx   context.Context
	now   time.Time
}

func setup(t *testing.T) *bundle {
	t.Helper()
	db := testenv.Ledger(t)
	return &bundle{store: model.NewStore(db), db: db, ctx: context.Background(), now: time.Now().UTC().Truncate(time.Millisecond)}
}

// eachCheckPath runs test on b twice: with MariaDB checking the held
// statements' expectations, then with Go checking them as on MySQL
// (CheckedInGo); each run gets its own key for its fixtures.
func eachCheckPath[K any](t *testing.T, b *bundle, test func(t *testing.T, b *bundle, key K), server, inGo K) {
	t.Run("checked by the server", func(t *testing.T) { test(t, b, server) })
	b.store = model.CheckedInGo(b.store)
	t.Run("checked in Go", func(t *testing.T) { test(t, b, inGo) })
}

// order inserts an order in a status (written directly, as a fixture).
func (b *bundle) order(t *testing.T, status model.OrderStatus) *model.Order {
	t.Helper()
	var r [6]byte
	_, _ = rand.Read(r[:])
	o := &model.Order{
		OrderNo: "T" + hex.EncodeToString(r[:]), UserID: 1, ProductID: 1, Kind: model.KindRecharge,
		Quantity: 1, AmountCents: 100, Status: model.OrderPending,
		CreatedAt: b.now, UpdatedAt: b.now, ExpireAt: b.now.Add(15 * time.Minute),
	}
	if err := b.store.InsertOrder(b.ctx, o); err != nil {
		t.Fatal(err)
	}
	if o.ID == 0 {
		t.Fatal("InsertOrder did not set the ID")
	}
	if status != model.OrderPending {
		testenv.Exec(t, b.db, `UPDATE orders SET status = ? WHERE id = ?`, status, o.ID)
		o.Status = status
	}
	return o
}

func (b *bundle) reload(t *testing.T, o *model.Order) *model.Order {
	t.Helper()
	got, err := b.store.OrderByID(b.ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// move runs one MoveOrder in its own transaction, as callers do.
func (b *bundle) move(o *model.Order, m model.OrderMove) (bool, error) {
	if m.At.IsZero() {
		m.At = b.now
	}
	var moved bool
	err := b.store.InTx(b.ctx, func(tx *model.Store) (err error) {
		moved, err = tx.MoveOrder(b.ctx, o.ID, o.OrderNo, m)
		return err
	})
	return moved, err
}

func (b *bundle) moves(t *testing.T, o *model.Order) []string {
	t.Helper()
	events, err := b.store.EventsFor(b.ctx, "order", o.OrderNo)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, e := range events {
		out = append(out, e.FromStatus+"→"+e.ToStatus+" ("+e.Reason+")")
	}
	return out
}

// TestMoveOrderRefusesDisallowedMove: a move outside the transition table is
// an error and touches neither the order nor the history.
func TestMoveOrderRefusesDisallowedMove(t *testing.T) {
	b := setup(t)
	o := b.order(t, model.OrderPending)
	for _, to := range []model.OrderStatus{model.OrderFinished, model.OrderClaimed, model.OrderRefunded, model.OrderPending} {
		moved, err := b.move(o, model.OrderMove{From: model.OrderPending, To: to, Reason: "test"})
		if err == nil || moved {
			t.Errorf("pending→%s: moved=%v err=%v, want an error", to, moved, err)
		} else if !strings.Contains(err.Error(), o.OrderNo) {
			t.Errorf("pending→%s: error %q does not name the order", to, err)
		}
	}
	if got := b.reload(t, o).Status; got != model.OrderPending {
		t.Errorf("status after refused moves = %s, want pending", got)
	}
	if got := b.moves(t, o); len(got) != 0 {
		t.Errorf("refused moves wrote events: %v", got)
	}
}

// TestMoveOrderZeroRowsIsFalse: a move naming a status the order is not in
// updates nothing and reports false without error (someone else moved it);
// the successful move writes exactly one event.
func TestMoveOrderZeroRowsIsFalse(t *testing.T) {
	b := setup(t)
	o := b.order(t, model.OrderPending)

	moved, err := b.move(o, model.OrderMove{From: model.OrderPaid, To: model.OrderClaimed, Reason: "claim"})
	if err != nil || moved {
		t.Fatalf("paid→claimed on a pending order: moved=%v err=%v, want false, nil", moved, err)
	}
	moved, err = b.move(o, model.OrderMove{From: model.OrderPending, To: model.OrderPaid, Reason: "payment",
		Set: map[string]any{"trade_no": "TR1"}})
	if err != nil || !moved {
		t.Fatalf("pending→paid: moved=%v err=%v, want true, nil", moved, err)
	}
	// The same move again is a lost race: 0 rows, false, no error, no event.
	moved, err = b.move(o, model.OrderMove{From: model.OrderPending, To: model.OrderPaid, Reason: "payment",
		Set: map[string]any{"trade_no": "TR2"}})
	if err != nil || moved {
		t.Fatalf("second pending→paid: moved=%v err=%v, want false, nil", moved, err)
	}
	got := b.reload(t, o)
	if got.Status != model.OrderPaid || got.TradeNo == nil || *got.TradeNo != "TR1" {
		t.Errorf("order after moves: status %s trade %v, want paid TR1", got.Status, got.TradeNo)
	}
	if diff := cmp.Diff([]string{"pending→paid (payment)"}, b.moves(t, o)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestMoveOrderTokenGuard: only the claim's holder (its token) finalizes.
func TestMoveOrderTokenGuard(t *testing.T) {
	b := setup(t)
	o := b.order(t, model.OrderPaid)
	moved, err := b.move(o, model.OrderMove{From: model.OrderPaid, To: model.OrderClaimed, Reason: "claim",
		CountAttempt: true, Set: map[string]any{"claim_token": "tokenA"}})
	if err != nil || !moved {
		t.Fatalf("claim: moved=%v err=%v", moved, err)
	}
	moved, err = b.move(o, model.OrderMove{From: model.OrderClaimed, To: model.OrderFinished, Reason: "delivered", Token: "tokenB"})
	if err != nil || moved {
		t.Fatalf("finalize with a stranger's token: moved=%v err=%v, want false, nil", moved, err)
	}
	moved, err = b.move(o, model.OrderMove{From: model.OrderClaimed, To: model.OrderFinished, Reason: "delivered", Token: "tokenA"})
	if err != nil || !moved {
		t.Fatalf("finalize with the holder's token: moved=%v err=%v", moved, err)
	}
	got := b.reload(t, o)
	if got.Status != model.OrderFinished || got.Attempts != 1 {
		t.Errorf("order: status %s attempts %d, want finished 1", got.Status, got.Attempts)
	}
}

// TestNextGenGuard: re-entering the queue requires the generation before the
// new one, so two sweepers cannot both re-queue an order.
func TestNextGenGuard(t *testing.T) {
	b := setup(t)
	o := b.order(t, model.OrderPending)
	moved, err := b.move(o, model.OrderMove{From: model.OrderPending, To: model.OrderPaid, Reason: "payment", NextGen: 2})
	if err != nil || moved {
		t.Fatalf("pending→paid with NextGen 2 on gen 0: moved=%v err=%v, want false, nil", moved, err)
	}
	moved, err = b.move(o, model.OrderMove{From: model.OrderPending, To: model.OrderPaid, Reason: "payment", NextGen: 1})
	if err != nil || !moved {
		t.Fatalf("pending→paid with NextGen 1: moved=%v err=%v", moved, err)
	}
	if g := b.reload(t, o).ActivateGen; g != 1 {
		t.Fatalf("activate_gen = %d, want 1", g)
	}

	// Two sweepers read gen 1 and both try gen 2: one wins.
	ok1, err1 := b.store.RequeueOrder(b.ctx, o.ID, 2, b.now)
	ok2, err2 := b.store.RequeueOrder(b.ctx, o.ID, 2, b.now)
	if err1 != nil || err2 != nil || !ok1 || ok2 {
		t.Fatalf("RequeueOrder gen 2 twice = (%v, %v), (%v, %v); want one true, one false", ok1, err1, ok2, err2)
	}
	// A stale generation (from before the re-queue) is refused on a status move too.
	moved, err = b.move(o, model.OrderMove{From: model.OrderPaid, To: model.OrderFailed, Reason: "stale", NextGen: 2})
	if err != nil || moved {
		t.Fatalf("move with stale NextGen 2 on gen 2: moved=%v err=%v, want false, nil", moved, err)
	}
	got := b.reload(t, o)
	if got.ActivateGen != 2 || got.Status != model.OrderPaid {
		t.Errorf("order: gen %d status %s, want 2 paid", got.ActivateGen, got.Status)
	}
}

// TestClaimEffectOnce: the (order, effect) key applies an effect once.
func TestClaimEffectOnce(t *testing.T) {
	b := setup(t)
	o := b.order(t, model.OrderClaimed)
	for i, want := range []bool{true, false, false} {
		got, err := b.store.ClaimEffect(b.ctx, o.ID, "recharge", "", b.now)
		if err != nil || got != want {
			t.Fatalf("ClaimEffect #%d = %v, %v; want %v, nil", i+1, got, err, want)
		}
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM order_effects WHERE order_id = ?`, o.ID); n != 1 {
		t.Errorf("order_effects rows = %d, want 1", n)
	}
	// The ledger's other once-only keys behave the same.
	if err := b.store.InsertUser(b.ctx, &model.User{Name: "once", TokenHash: "once", CreatedAt: b.now}); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.store.CreditWallet(b.ctx, 1, "credit", "order:"+o.OrderNo, 500, b.now); err != nil || !ok {
		t.Fatalf("first credit: %v, %v", ok, err)
	}
	if ok, err := b.store.CreditWallet(b.ctx, 1, "credit", "order:"+o.OrderNo, 500, b.now); err != nil || ok {
		t.Fatalf("second credit with the same ref: %v, %v; want false, nil", ok, err)
	}
	p := &model.Payment{TradeNo: "TR-ONCE", OrderID: o.ID, AmountCents: 100, Disposition: model.PaymentApplied, CreatedAt: b.now}
	if ok, err := b.store.InsertPayment(b.ctx, p); err != nil || !ok {
		t.Fatalf("first payment: %v, %v", ok, err)
	}
	if ok, err := b.store.InsertPayment(b.ctx, p); err != nil || ok {
		t.Fatalf("same trade again: %v, %v; want false, nil", ok, err)
	}
}

// TestInTxRollsBack: an error from the function undoes every write of the
// transaction — the status move and its event together — and is returned.
func TestInTxRollsBack(t *testing.T) {
	b := setup(t)
	o := b.order(t, model.OrderPending)
	boom := errors.New("boom")
	err := b.store.InTx(b.ctx, func(tx *model.Store) error {
		moved, err := tx.MoveOrder(b.ctx, o.ID, o.OrderNo, model.OrderMove{From: model.OrderPending, To: model.OrderPaid, Reason: "payment", At: b.now})
		if err != nil || !moved {
			return fmt.Errorf("move inside tx: %v %w", moved, err)
		}
		if _, err := tx.ClaimEffect(b.ctx, o.ID, "recharge", "", b.now); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx error = %v, want boom", err)
	}
	if got := b.reload(t, o).Status; got != model.OrderPending {
		t.Errorf("status after rollback = %s, want pending", got)
	}
	if got := b.moves(t, o); len(got) != 0 {
		t.Errorf("events after rollback: %v", got)
	}
	if n := testenv.Count(t, b.db, `SELECT COUNT(*) FROM order_effects`); n != 0 {
		t.Errorf("order_effects after rollback = %d, want 0", n)
	}
}

// TestLedgerSessionIsReadCommitted: every pooled connection runs READ
// COMMITTED, so a read after a 0-row UPDATE sees the committed truth.
func TestLedgerSessionIsReadCommitted(t *testing.T) {
	b := setup(t)
	var level string
	err := b.db.Raw(`SELECT @@SESSION.tx_isolation`).Scan(&level).Error
	if err != nil {
		err = b.db.Raw(`SELECT @@SESSION.transaction_isolation`).Scan(&level).Error
	}
	if err != nil {
		t.Fatal(err)
	}
	if level != "READ-COMMITTED" {
		t.Errorf("session isolation = %q, want READ-COMMITTED", level)
	}
}

// TestStatusMoveUsesPrimaryKey: the status-move UPDATE is planned on the
// primary key, not on a status index that would take range locks.
func TestStatusMoveUsesPrimaryKey(t *testing.T) {
	b := setup(t)
	// Enough rows in mixed statuses for the optimizer to have a real choice.
	statuses := []model.OrderStatus{model.OrderPending, model.OrderPaid, model.OrderFinished, model.OrderClaimed}
	var target *model.Order
	for i := range 200 {
		o := b.order(t, statuses[i%len(statuses)])
		if i == 100 {
			target = o
		}
	}
	// ANALYZE answers with a result set, so it is read, not Exec'd.
	var analyzed []map[string]any
	if err := b.db.Raw(`ANALYZE TABLE orders`).Scan(&analyzed).Error; err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`EXPLAIN UPDATE orders SET status = ? WHERE id = ? AND status = ?`,
		`EXPLAIN UPDATE orders SET status = ?, updated_at = ?, claim_token = ? WHERE id = ? AND status = ? AND claim_token = ?`,
	} {
		var rows []map[string]any
		args := []any{model.OrderClaimed, target.ID, target.Status}
		if strings.Contains(q, "claim_token") {
			args = []any{model.OrderFinished, b.now, "x", target.ID, model.OrderClaimed, "x"}
		}
		if err := b.db.Raw(q, args...).Scan(&rows).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if len(rows) != 1 {
			t.Fatalf("%s: %d plan rows, want 1: %v", q, len(rows), rows)
		}
		t.Logf("%s: %v", q, rows[0])
		if key := fmt.Sprint(rows[0]["key"]); key != "PRIMARY" {
			t.Errorf("%s: key = %q, want PRIMARY (plan %v)", q, key, rows[0])
		}
	}
}

// onBothLedgers runs fn on MariaDB (the package's own database) and on a
// fresh SQLite ledger, each as a subtest.
func onBothLedgers(t *testing.T, fn func(t *testing.T, b *bundle)) {
	for _, backend := range []string{"mysql", "sqlite"} {
		t.Run(backend, func(t *testing.T) {
			b := setup(t)
			if backend == "sqlite" {
				db, err := model.OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), model.PoolConfig{MaxOpen: 1})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := model.Migrate(b.ctx, db); err != nil {
					t.Fatal(err)
				}
				b.store = model.NewStore(db)
			}
			fn(t, b)
		})
	}
}
