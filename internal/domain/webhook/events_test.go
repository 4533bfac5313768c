package webhook

import (
	"slices"
	"testing"
)

func TestEventFor(t *testing.T) {
	for _, c := range []struct{ object, from, to, want string }{
		{"order", "pending", "paid", "order.paid"},
		{"order", "claimed", "finished", "order.finished"},
		{"order", "pending", "closed", "order.closed"},
		{"order", "refunding", "refunded", "order.refunded"},
		{"refund", "processing", "manual", "refund.manual"},
		{"group", "closed", "settled", "group.settled"},
		{"group", "failed", "settled", "group.settled"},
		{"group", "closed", "failed", "group.failed"},
		{"dispute", "", "opened", "order.disputed"},
		{"statement_break", "", "open", "statement.break"},
		// Moves SPEC names no event for.
		{"order", "paid", "claimed", ""},
		{"order", "claimed", "paid", ""},
		{"order", "failed", "paid", ""},
		{"refund", "processing", "succeeded", ""},
		{"group", "open", "closed", ""},
	} {
		if got := EventFor(c.object, c.from, c.to); got != c.want {
			t.Errorf("EventFor(%s, %s → %s) = %q, want %q", c.object, c.from, c.to, got, c.want)
		}
	}
}

func TestEventTypesAreSPECs(t *testing.T) {
	want := []string{"group.failed", "group.settled", "order.closed", "order.disputed", "order.finished",
		"order.paid", "order.refunded", "refund.manual", "statement.break"}
	var got []string
	for _, e := range events {
		if !slices.Contains(got, e) {
			got = append(got, e)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the events sent are %v, want SPEC's %v", got, want)
	}
}
