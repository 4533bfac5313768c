package model_test

import (
	"slices"
	"strings"
	"testing"

	"orderflow/model"

	"github.com/google/go-cmp/cmp"
)

// machineView is what a test can see of one machine, in names.
type machineView struct {
	Initial  string
	Terminal []string
	// Allowed is every (from, to) pair of known statuses Can allows, asked
	// pair by pair — the check itself, not the list it reads.
	Allowed []string
}

// viewOf asks m about every pair of its statuses. Edges must yield exactly
// the pairs Can allows, and no move may involve an unknown status (the
// type's zero value is none of them).
func viewOf[S model.Status](t *testing.T, m *model.Machine[S]) machineView {
	t.Helper()
	v := machineView{Initial: m.Initial().String()}
	var zero S
	for _, from := range m.Statuses() {
		if m.Terminal(from) {
			v.Terminal = append(v.Terminal, from.String())
		}
		if m.Can(zero, from) || m.Can(from, zero) {
			t.Errorf("a move between %v and the unknown status %v is allowed", from, zero)
		}
		for _, to := range m.Statuses() {
			if m.Can(from, to) {
				v.Allowed = append(v.Allowed, from.String()+"→"+to.String())
			}
		}
	}
	var edges []string
	for from, to := range m.Edges() {
		edges = append(edges, from.String()+"→"+to.String())
	}
	if diff := cmp.Diff(sorted(v.Allowed), sorted(edges)); diff != "" {
		t.Errorf("Edges() differs from what Can allows (-Can +Edges):\n%s", diff)
	}
	return v
}

// viewing defers viewOf(m) to the subtest that checks m.
func viewing[S model.Status](m *model.Machine[S]) func(*testing.T) machineView {
	return func(t *testing.T) machineView { return viewOf(t, m) }
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestTransitionTables lists every machine whole: exactly these moves are
// allowed, every other pair of known statuses is refused. Orders are SPEC
// "Allowed moves"; groups, refunds and card keys are what
// internal/domain/group, internal/domain/refund and model/cards.go do.
func TestTransitionTables(t *testing.T) {
	cases := []struct {
		name string
		got  func(t *testing.T) machineView
		want machineView
	}{
		{"order", viewing(model.OrderMachine), machineView{
			Initial:  "pending",
			Terminal: []string{"closed", "failed", "finished", "refunded"},
			Allowed: []string{
				"pending→paid", "pending→closed", // payment; expiry or buyer cancel
				"paid→claimed", "paid→failed",
				"closed→refunding",                // payment after close
				"failed→paid", "failed→refunding", // operator retry; operator refund
				"claimed→paid", "claimed→failed", "claimed→finished",
				"refunding→refunded",
			},
		}},
		{"group", viewing(model.GroupMachine), machineView{
			Initial:  "OPEN",
			Terminal: []string{"SETTLED", "FAILED"},
			Allowed:  []string{"OPEN→CLOSED", "CLOSED→SETTLED", "CLOSED→FAILED", "FAILED→SETTLED"},
		}},
		{"refund", viewing(model.RefundMachine), machineView{
			Initial:  "processing",
			Terminal: []string{"succeeded", "manual"},
			Allowed:  []string{"processing→succeeded", "processing→manual", "manual→processing", "manual→succeeded"},
		}},
		{"card key", viewing(model.CardMachine), machineView{
			Initial:  "UNSOLD",
			Terminal: []string{"SOLD"},
			Allowed:  []string{"UNSOLD→LOCKED", "LOCKED→SOLD", "LOCKED→RECYCLED", "RECYCLED→LOCKED"},
		}},
		{"dispute", viewing(model.DisputeMachine), machineView{
			Initial:  "needs_response",
			Terminal: []string{"warning_closed", "won", "lost", "prevented"},
			Allowed: []string{
				"warning_needs_response→warning_under_review", "warning_needs_response→warning_closed",
				"warning_needs_response→needs_response", "warning_needs_response→prevented",
				"warning_under_review→warning_closed", "warning_under_review→needs_response",
				"needs_response→under_review", "needs_response→won", "needs_response→lost", "needs_response→prevented",
				"under_review→won", "under_review→lost",
			},
		}},
		{"statement run", viewing(model.StatementRunMachine), machineView{
			Initial:  "queued",
			Terminal: []string{"done", "failed"},
			Allowed:  []string{"queued→running", "queued→failed", "running→done", "running→failed"},
		}},
		{"statement break", viewing(model.BreakMachine), machineView{
			Initial:  "open",
			Terminal: []string{"resolved"},
			Allowed:  []string{"open→resolved"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.got(t)
			want := tc.want
			want.Allowed = sorted(want.Allowed)
			got.Allowed = sorted(got.Allowed)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s machine (-want +got):\n%s", tc.name, diff)
			}
		})
	}
}

// TestMachineCheck pins the error a refused move returns: it names the
// object and the move.
func TestMachineCheck(t *testing.T) {
	if err := model.OrderMachine.Check("O1", model.OrderPending, model.OrderPaid); err != nil {
		t.Errorf("Check(pending→paid) = %v, want nil", err)
	}
	err := model.GroupMachine.Check("G1", model.GroupSettled, model.GroupOpen)
	if got, want := errString(err), "move group G1: SETTLED→OPEN is not an allowed move"; got != want {
		t.Errorf("Check(SETTLED→OPEN) = %q, want %q", got, want)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestTablesSpellStatusesAsStored proves the name view the audit reads
// events with says the same as the typed machines, and that every name
// parses back to its status.
func TestTablesSpellStatusesAsStored(t *testing.T) {
	got := map[string][]string{}
	for _, tb := range model.Tables() {
		got[tb.Object] = tb.Statuses
		for _, e := range tb.Edges {
			if !tb.Allows(e.From, e.To) {
				t.Errorf("%s: Allows(%s, %s) = false for a listed edge", tb.Object, e.From, e.To)
			}
		}
	}
	want := map[string][]string{
		"order":    {"pending", "paid", "closed", "failed", "finished", "claimed", "refunding", "refunded"},
		"group":    {"OPEN", "CLOSED", "SETTLED", "FAILED"},
		"refund":   {"processing", "succeeded", "manual"},
		"card_key": {"UNSOLD", "LOCKED", "SOLD", "RECYCLED"},
		"dispute": {"warning_needs_response", "warning_under_review", "warning_closed",
			"needs_response", "under_review", "won", "lost", "prevented"},
		"statement_run":   {"queued", "running", "done", "failed"},
		"statement_break": {"open", "resolved"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses by machine (-want +got):\n%s", diff)
	}
	if s, ok := model.RefundMachine.Parse("manual"); !ok || s != model.RefundManual {
		t.Errorf(`RefundMachine.Parse("manual") = %q, %v`, s, ok)
	}
	if _, ok := model.GroupMachine.Parse("open"); ok {
		t.Error(`GroupMachine.Parse("open") accepted a name in the wrong case`)
	}
}

// TestFlowKindNames pins the stored numbers of the stock-flow kinds: they
// are in stock_flows.flow_type and in the stock counter's restore markers.
func TestFlowKindNames(t *testing.T) {
	got := map[int]string{}
	for _, k := range model.FlowKinds {
		got[int(k)] = k.String()
	}
	want := map[int]string{1: "lock", 2: "sell", 3: "close restore", 4: "refund restore"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flow kinds (-want +got):\n%s", diff)
	}
	if s := model.FlowKind(9).String(); !strings.Contains(s, "9") {
		t.Errorf("FlowKind(9).String() = %q, want the number", s)
	}
}
