package model

import (
	"fmt"
	"iter"
	"slices"
)

// Every transition table of orderflow is in this file, one Machine each.
// A status move anywhere in the code is checked against its machine
// (Machine.Check), TestTransitionTables lists each table whole, and
// docs/state-machines.md draws each one — TestStateMachineDiagrams fails
// when a table and its diagram disagree. A new move is one line here, one
// in the test and one in the diagram.

// OrderMachine is the order table: SPEC "Allowed moves", nothing more.
// closed and failed are terminal for our tasks; only a payment after the
// close, or an operator, moves an order out of them.
var OrderMachine = newMachine("order", OrderPending,
	[]OrderStatus{OrderPending, OrderPaid, OrderClosed, OrderFailed, OrderFinished, OrderClaimed, OrderRefunding, OrderRefunded},
	[]OrderStatus{OrderClosed, OrderFailed, OrderFinished, OrderRefunded},
	Edge[OrderStatus]{OrderPending, OrderPaid},       // payment notified
	Edge[OrderStatus]{OrderPending, OrderClosed},     // expiry or buyer cancel
	Edge[OrderStatus]{OrderPaid, OrderClaimed},       // an activate task claims it
	Edge[OrderStatus]{OrderPaid, OrderFailed},        // attempts exhausted
	Edge[OrderStatus]{OrderClaimed, OrderFinished},   // delivered
	Edge[OrderStatus]{OrderClaimed, OrderPaid},       // released, or a stuck claim recovered
	Edge[OrderStatus]{OrderClaimed, OrderFailed},     // attempts exhausted
	Edge[OrderStatus]{OrderFailed, OrderPaid},        // operator retry
	Edge[OrderStatus]{OrderFailed, OrderRefunding},   // operator refund
	Edge[OrderStatus]{OrderClosed, OrderRefunding},   // payment after close
	Edge[OrderStatus]{OrderRefunding, OrderRefunded}, // every refund succeeded
)

// GroupMachine is the group-buy table (internal/domain/group). A group past
// its deadline is closed first, then settled or failed; FAILED→SETTLED is
// only taken by an operator's retry.
var GroupMachine = newMachine("group", GroupOpen,
	[]GroupStatus{GroupOpen, GroupClosed, GroupSettled, GroupFailed},
	[]GroupStatus{GroupSettled, GroupFailed},
	Edge[GroupStatus]{GroupOpen, GroupClosed},    // deadline passed
	Edge[GroupStatus]{GroupClosed, GroupSettled}, // every participant charged
	Edge[GroupStatus]{GroupClosed, GroupFailed},  // a participant short, or the charge gave up
	Edge[GroupStatus]{GroupFailed, GroupSettled}, // operator retry
)

// RefundMachine is the refund table (internal/domain/refund). manual waits
// for an operator, who retries it (back to processing) or resolves it by
// hand; a late provider callback may also settle it.
var RefundMachine = newMachine("refund", RefundProcessing,
	[]RefundStatus{RefundProcessing, RefundSucceeded, RefundManual},
	[]RefundStatus{RefundSucceeded, RefundManual},
	Edge[RefundStatus]{RefundProcessing, RefundSucceeded}, // the provider confirmed
	Edge[RefundStatus]{RefundProcessing, RefundManual},    // attempts exhausted, or the provider declared it failed
	Edge[RefundStatus]{RefundManual, RefundProcessing},    // operator retry
	Edge[RefundStatus]{RefundManual, RefundSucceeded},     // operator resolved, or a late provider callback
)

// CardMachine is the card-key table. Keys move in bulk by the UPDATEs in
// cards.go (LockCardsLater, RecycleCardsLater) and batchactivation.go
// (SellCardOrdersLater), which name the statuses they leave; card keys
// record no events.
var CardMachine = newMachine("card_key", CardUnsold,
	[]CardStatus{CardUnsold, CardLocked, CardSold, CardRecycled},
	[]CardStatus{CardSold},
	Edge[CardStatus]{CardUnsold, CardLocked},   // an order is created
	Edge[CardStatus]{CardRecycled, CardLocked}, // an order is created
	Edge[CardStatus]{CardLocked, CardSold},     // the order is delivered
	Edge[CardStatus]{CardLocked, CardRecycled}, // the order closed unpaid, or failed and was refunded
)

// DisputeMachine is the dispute table (internal/domain/dispute): the
// provider moves a dispute, orderflow only records it, forward only, so an
// older event arriving late never reopens a closed one. A dispute is
// recorded in the status its first event carries (an inquiry starts at
// warning_needs_response); needs_response is where a chargeback starts.
var DisputeMachine = newMachine("dispute", DisputeNeedsResponse,
	[]DisputeStatus{DisputeWarningNeedsResponse, DisputeWarningUnderReview, DisputeWarningClosed,
		DisputeNeedsResponse, DisputeUnderReview, DisputeWon, DisputeLost, DisputePrevented},
	[]DisputeStatus{DisputeWarningClosed, DisputeWon, DisputeLost, DisputePrevented},
	Edge[DisputeStatus]{DisputeWarningNeedsResponse, DisputeWarningUnderReview}, // evidence sent for an inquiry
	Edge[DisputeStatus]{DisputeWarningNeedsResponse, DisputeWarningClosed},      // the inquiry closed
	Edge[DisputeStatus]{DisputeWarningNeedsResponse, DisputeNeedsResponse},      // the inquiry became a chargeback
	Edge[DisputeStatus]{DisputeWarningNeedsResponse, DisputePrevented},          // the network prevented it
	Edge[DisputeStatus]{DisputeWarningUnderReview, DisputeWarningClosed},        // the inquiry closed
	Edge[DisputeStatus]{DisputeWarningUnderReview, DisputeNeedsResponse},        // the inquiry became a chargeback
	Edge[DisputeStatus]{DisputeNeedsResponse, DisputeUnderReview},               // evidence sent
	Edge[DisputeStatus]{DisputeNeedsResponse, DisputeWon},                       // the bank withdrew it
	Edge[DisputeStatus]{DisputeNeedsResponse, DisputeLost},                      // accepted, or no evidence by the due date
	Edge[DisputeStatus]{DisputeNeedsResponse, DisputePrevented},                 // the network prevented it
	Edge[DisputeStatus]{DisputeUnderReview, DisputeWon},                         // the bank decided for us
	Edge[DisputeStatus]{DisputeUnderReview, DisputeLost},                        // the bank decided for the buyer
)

// StatementRunMachine is a provider statement run (internal/domain/statement):
// queued until a worker starts it, running until its lines are matched.
// A crash leaves it running and the re-run continues it; the last try of
// a failing fetch fails it (a new run of the day is a new row).
var StatementRunMachine = newMachine("statement_run", StatementQueued,
	[]StatementRunStatus{StatementQueued, StatementRunning, StatementDone, StatementFailed},
	[]StatementRunStatus{StatementDone, StatementFailed},
	Edge[StatementRunStatus]{StatementQueued, StatementRunning}, // a worker started it
	Edge[StatementRunStatus]{StatementQueued, StatementFailed},  // the fetch's retry budget ran out
	Edge[StatementRunStatus]{StatementRunning, StatementDone},   // every line matched
	Edge[StatementRunStatus]{StatementRunning, StatementFailed}, // the fetch's retry budget ran out
)

// BreakMachine is a statement break: open until the system (the ledger now
// holds it) or an operator (with a note) resolves it.
var BreakMachine = newMachine("statement_break", BreakOpen,
	[]BreakStatus{BreakOpen, BreakResolved},
	[]BreakStatus{BreakResolved},
	Edge[BreakStatus]{BreakOpen, BreakResolved}, // resolved by the system or an operator
)

// Tables lists every machine in names, for the readers of the event history
// (internal/audit) and of the diagrams.
func Tables() []Table {
	return []Table{OrderMachine.Table(), GroupMachine.Table(), RefundMachine.Table(), CardMachine.Table(), DisputeMachine.Table(),
		StatementRunMachine.Table(), BreakMachine.Table()}
}

// Status is what every machine's statuses share: comparable values with the
// name events and diagrams spell them by.
type Status interface {
	comparable
	String() string
}

// Edge is one allowed move.
type Edge[S comparable] struct{ From, To S }

// Machine is one state machine: its statuses, where an object starts, which
// statuses are terminal, and every allowed move. It is immutable.
type Machine[S Status] struct {
	object   string
	initial  S
	statuses []S
	terminal []S
	edges    []Edge[S]
}

func newMachine[S Status](object string, initial S, statuses, terminal []S, edges ...Edge[S]) *Machine[S] {
	return &Machine[S]{object: object, initial: initial, statuses: statuses, terminal: terminal, edges: edges}
}

// Can reports whether from→to is an allowed move.
func (m *Machine[S]) Can(from, to S) bool { return slices.Contains(m.edges, Edge[S]{from, to}) }

// Check is Can as the error a move returns, naming the object: every status
// move runs it before its UPDATE, so no code path can write a move the
// table does not have.
func (m *Machine[S]) Check(objectNo string, from, to S) error {
	if !m.Can(from, to) {
		return fmt.Errorf("move %s %s: %s→%s is not an allowed move", m.object, objectNo, from, to)
	}
	return nil
}

// Terminal reports whether s is where our tasks leave an object for good: no
// task moves it on. A terminal status may still have moves out, each taken
// only from outside (an operator, a payment after the close).
func (m *Machine[S]) Terminal(s S) bool { return slices.Contains(m.terminal, s) }

// Initial is the status a new object starts in.
func (m *Machine[S]) Initial() S { return m.initial }

// Parse returns the status named name (as String spells it).
func (m *Machine[S]) Parse(name string) (S, bool) {
	for _, s := range m.statuses {
		if s.String() == name {
			return s, true
		}
	}
	var zero S
	return zero, false
}

// Statuses lists every known status.
func (m *Machine[S]) Statuses() []S { return slices.Clone(m.statuses) }

// Edges yields every allowed move, in table order.
func (m *Machine[S]) Edges() iter.Seq2[S, S] {
	return func(yield func(S, S) bool) {
		for _, e := range m.edges {
			if !yield(e.From, e.To) {
				return
			}
		}
	}
}

// Table returns the machine in its statuses' names.
func (m *Machine[S]) Table() Table {
	t := Table{Object: m.object, Initial: m.initial.String()}
	for _, s := range m.statuses {
		t.Statuses = append(t.Statuses, s.String())
	}
	for _, s := range m.terminal {
		t.Terminal = append(t.Terminal, s.String())
	}
	for from, to := range m.Edges() {
		t.Edges = append(t.Edges, Edge[string]{from.String(), to.String()})
	}
	return t
}

// Table is a machine spelled in its statuses' names, as events record them
// and docs/state-machines.md draws them, for readers that hold names rather
// than typed statuses.
type Table struct {
	Object   string // the object type events name ("order", "group", "refund", "card_key", "dispute")
	Initial  string
	Statuses []string
	Terminal []string
	Edges    []Edge[string]
}

// Allows reports whether from→to, in names, is an allowed move.
func (t Table) Allows(from, to string) bool { return slices.Contains(t.Edges, Edge[string]{from, to}) }
