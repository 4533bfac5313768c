package refund_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"orderflow/internal/domain/refund"
	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/pay/paysim"
	"orderflow/internal/testenv"
	"orderflow/model"

	"go.uber.org/zap"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// ledger is one test's refund service on a fresh, migrated MariaDB
// database. Its only provider is the simulator at an address nobody
// listens on: every send fails at once, which is all the rules here need.
type ledger struct {
	testenv.Base
	ctx context.Context
	svc *refund.Service
}

func newLedger(t *testing.T) *ledger {
	t.Helper()
	reg, err := pay.NewRegistry(paysim.New("http://127.0.0.1:1", "secret", time.Second))
	if err != nil {
		t.Fatal(err)
	}
	b := testenv.NewBase(t, time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	// An operator in the context, so trail.Record writes its entries.
	return &ledger{Base: b, ctx: testenv.AdminContext(),
		svc: refund.New(refund.Deps{Store: b.Store, Pay: reg, Clock: b.Clock, Log: zap.NewNop()}, refund.Settings{MaxAttempts: 1, AlertAfter: time.Hour})}
}

// order writes an order of amount cents in status (a fixture).
func (l *ledger) order(t *testing.T, status model.OrderStatus, amount int64) *model.Order {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	now := l.Clock.Now()
	o := &model.Order{OrderNo: "T" + hex.EncodeToString(b[:]), UserID: 1, ProductID: 1, Kind: model.KindRecharge,
		Quantity: 1, AmountCents: amount, Status: model.OrderPending, CreatedAt: now, UpdatedAt: now, ExpireAt: now.Add(time.Hour)}
	if err := l.Store.InsertOrder(l.ctx, o); err != nil {
		t.Fatal(err)
	}
	if status != model.OrderPending {
		testenv.Exec(t, l.DB, `UPDATE orders SET status = ? WHERE id = ?`, status, o.ID)
		o.Status = status
	}
	return o
}

// open runs refund.Open in its own transaction, as the payment and the operator do.
func (l *ledger) open(o *model.Order, req refund.Request) (r *model.Refund, fresh bool, err error) {
	err = l.Store.InTx(l.ctx, func(tx *model.Store) (err error) {
		r, fresh, err = refund.Open(l.ctx, tx, o, req, l.Clock.Now())
		return err
	})
	return r, fresh, err
}

func (l *ledger) mustOpen(t *testing.T, o *model.Order, req refund.Request) *model.Refund {
	t.Helper()
	r, fresh, err := l.open(o, req)
	if err != nil || !fresh {
		t.Fatalf("open: fresh %v, %v", fresh, err)
	}
	return r
}

func (l *ledger) refund(t *testing.T, baseNo string) *model.Refund {
	t.Helper()
	r, err := l.Store.RefundByBaseNo(l.ctx, baseNo)
	if err != nil {
		t.Fatalf("refund %s: %v", baseNo, err)
	}
	return r
}
