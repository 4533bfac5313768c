package model_test

import (
	"testing"

	"orderflow/model"

	"github.com/google/go-cmp/cmp"
)

// allStatuses is SPEC's status table: code and name, in code order.
var allStatuses = []struct {
	code int
	name string
}{
	{1, "pending"}, {2, "paid"}, {3, "closed"}, {4, "failed"},
	{5, "finished"}, {6, "claimed"}, {7, "refunding"}, {8, "refunded"},
}

// TestOrderStatusCodes proves the status numbers and names are SPEC's (seed
// 002's numbering, claimed distinct from failed) and that both parse back.
func TestOrderStatusCodes(t *testing.T) {
	for _, s := range allStatuses {
		st := model.OrderStatus(s.code)
		if got := st.String(); got != s.name {
			t.Errorf("OrderStatus(%d).String() = %q, want %q", s.code, got, s.name)
		}
		if got, ok := model.ParseOrderStatus(s.name); !ok || got != st {
			t.Errorf("ParseOrderStatus(%q) = %v, %v; want %d", s.name, got, ok, s.code)
		}
	}
	if _, ok := model.ParseOrderStatus("shipped"); ok {
		t.Error(`ParseOrderStatus("shipped") accepted an unknown status`)
	}
}

// TestOrderTransitionTable checks CanMoveOrder for all 64 (from, to) pairs
// against SPEC "Allowed moves", written out literally: nothing more is
// allowed, nothing less.
func TestOrderTransitionTable(t *testing.T) {
	want := map[string]bool{
		"pending→paid":       true,
		"pending→closed":     true, // expiry or buyer cancel
		"paid→claimed":       true,
		"claimed→finished":   true,
		"claimed→paid":       true, // release or stuck recovery
		"paid→failed":        true, // attempts exhausted
		"claimed→failed":     true, // attempts exhausted
		"failed→paid":        true, // operator retry
		"failed→refunding":   true, // operator refund
		"closed→refunding":   true, // payment after close
		"refunding→refunded": true,
	}
	got := map[string]bool{}
	for _, from := range allStatuses {
		for _, to := range allStatuses {
			if model.CanMoveOrder(model.OrderStatus(from.code), model.OrderStatus(to.code)) {
				got[from.name+"→"+to.name] = true
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("allowed order moves differ from SPEC (-want +got):\n%s", diff)
	}
	// Unknown statuses never move anywhere.
	if model.CanMoveOrder(0, model.OrderPaid) || model.CanMoveOrder(model.OrderPaid, 9) {
		t.Error("CanMoveOrder allowed a move involving an unknown status")
	}
}

// TestTerminalStatuses pins which statuses no automatic move leaves: the
// sweepers rely on it to know what needs a live task.
func TestTerminalStatuses(t *testing.T) {
	want := map[string]bool{"closed": true, "failed": true, "finished": true, "refunded": true}
	got := map[string]bool{}
	for _, s := range allStatuses {
		if model.OrderStatus(s.code).Terminal() {
			got[s.name] = true
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("terminal statuses (-want +got):\n%s", diff)
	}
}
