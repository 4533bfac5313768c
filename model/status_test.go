package model_test

import (
	"testing"

	"orderflow/model"
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
