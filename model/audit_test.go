package model_test

import (
	"encoding/json"
	"errors"
	"testing"

	"orderflow/model"

	"github.com/google/go-cmp/cmp"
)

// An audit entry rides its transaction: a rollback leaves none, a commit
// leaves exactly one, read back oldest first with its detail intact.
func TestAuditEntryRidesTheTransaction(t *testing.T) {
	b := setup(t)
	o := b.order(t, model.OrderFailed)
	entry := func(action string) model.AuditEntry {
		return model.AuditEntry{At: b.now, Actor: "ann", Action: action, Object: o.OrderNo, Detail: json.RawMessage(`{"from":"failed","to":"paid"}`)}
	}
	undone := errors.New("undo")
	err := b.store.InTx(b.ctx, func(tx *model.Store) error {
		if err := tx.InsertAuditLater(b.ctx, entry("rolled_back")); err != nil {
			return err
		}
		if _, err := tx.MoveOrder(b.ctx, o.ID, o.OrderNo, model.OrderMove{From: model.OrderFailed, To: model.OrderPaid, At: b.now}); err != nil {
			return err
		}
		return undone
	})
	if !errors.Is(err, undone) {
		t.Fatalf("rolled-back transaction: %v", err)
	}
	if err := b.store.InTx(b.ctx, func(tx *model.Store) error {
		if _, err := tx.MoveOrder(b.ctx, o.ID, o.OrderNo, model.OrderMove{From: model.OrderFailed, To: model.OrderPaid, At: b.now}); err != nil {
			return err
		}
		return tx.InsertAuditLater(b.ctx, entry("order_retry"))
	}); err != nil {
		t.Fatal(err)
	}
	got, err := b.store.AuditFor(b.ctx, o.OrderNo)
	if err != nil {
		t.Fatal(err)
	}
	want := []model.AuditEntry{entry("order_retry")}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b json.RawMessage) bool { return string(a) == string(b) }), cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".ID" }, cmp.Ignore())); diff != "" {
		t.Errorf("audit trail (-want +got):\n%s", diff)
	}
}

// An order's story reads the trail of the order and its refunds in one
// query: every listed object's entries, oldest first, and no other's.
func TestAuditForAllReadsSeveralObjectsOldestFirst(t *testing.T) {
	b := setup(t)
	o, other := b.order(t, model.OrderFailed), b.order(t, model.OrderFailed)
	refundNo := "R" + o.OrderNo
	for _, e := range []struct{ object, action string }{{o.OrderNo, "order_retry"}, {other.OrderNo, "order_retry"}, {refundNo, "refund_retry"}, {o.OrderNo, "order_refund"}} {
		if err := b.store.InsertAuditLater(b.ctx, model.AuditEntry{At: b.now, Actor: "ann", Action: e.action, Object: e.object}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.store.AuditForAll(b.ctx, []string{o.OrderNo, refundNo})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, e := range got {
		seen = append(seen, e.Object+" "+e.Action)
	}
	want := []string{o.OrderNo + " order_retry", refundNo + " refund_retry", o.OrderNo + " order_refund"}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("trail of the order and its refund (-want +got):\n%s", diff)
	}
	if none, err := b.store.AuditForAll(b.ctx, nil); err != nil || len(none) != 0 {
		t.Errorf("trail of no object: %v %v, want none", none, err)
	}
}
