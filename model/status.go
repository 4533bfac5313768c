package model

import "fmt"

// OrderStatus is an order's state, stored as its number in orders.status;
// the numbers follow seed 002 and SPEC. OrderMachine has its moves.
type OrderStatus int

// Order statuses. claimed (6) is deliberately distinct from failed (4).
const (
	OrderPending   OrderStatus = 1
	OrderPaid      OrderStatus = 2
	OrderClosed    OrderStatus = 3
	OrderFailed    OrderStatus = 4
	OrderFinished  OrderStatus = 5
	OrderClaimed   OrderStatus = 6
	OrderRefunding OrderStatus = 7
	OrderRefunded  OrderStatus = 8
)

var orderStatusNames = map[OrderStatus]string{
	OrderPending:   "pending",
	OrderPaid:      "paid",
	OrderClosed:    "closed",
	OrderFailed:    "failed",
	OrderFinished:  "finished",
	OrderClaimed:   "claimed",
	OrderRefunding: "refunding",
	OrderRefunded:  "refunded",
}

// String returns the status's API name.
func (s OrderStatus) String() string {
	if n, ok := orderStatusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("status(%d)", int(s))
}

// ParseOrderStatus maps an API name ("paid") or a code ("2") to a status.
func ParseOrderStatus(name string) (OrderStatus, bool) {
	for s, n := range orderStatusNames {
		if n == name || fmt.Sprint(int(s)) == name {
			return s, true
		}
	}
	return 0, false
}

// ProductKind is what a product delivers.
type ProductKind string

// Product kinds.
const (
	KindCard         ProductKind = "card"
	KindSubscription ProductKind = "subscription"
	KindRecharge     ProductKind = "recharge"
)

// Valid reports whether k is a known kind.
func (k ProductKind) Valid() bool {
	return k == KindCard || k == KindSubscription || k == KindRecharge
}

// The string statuses are stored as is (groups.status, refunds.status,
// card_keys.status) and events record them as is; GroupMachine,
// RefundMachine and CardMachine hold their moves.
type (
	// GroupStatus is a group-buy's state.
	GroupStatus string
	// RefundStatus is a refund's state; the admin API shows it as is.
	RefundStatus string
	// CardStatus is a card key's state.
	CardStatus string
	// DisputeStatus is a dispute's state as its provider names it (Stripe's).
	DisputeStatus string
	// StatementRunStatus is a provider statement run's state.
	StatementRunStatus string
	// BreakStatus is a statement break's state.
	BreakStatus string
)

// Group-buy, refund and card-key statuses.
const (
	GroupOpen    GroupStatus = "OPEN"
	GroupClosed  GroupStatus = "CLOSED"
	GroupSettled GroupStatus = "SETTLED"
	GroupFailed  GroupStatus = "FAILED"

	RefundProcessing RefundStatus = "processing"
	RefundSucceeded  RefundStatus = "succeeded"
	RefundManual     RefundStatus = "manual"

	CardUnsold   CardStatus = "UNSOLD"
	CardLocked   CardStatus = "LOCKED"
	CardSold     CardStatus = "SOLD"
	CardRecycled CardStatus = "RECYCLED"

	DisputeWarningNeedsResponse DisputeStatus = "warning_needs_response"
	DisputeWarningUnderReview   DisputeStatus = "warning_under_review"
	DisputeWarningClosed        DisputeStatus = "warning_closed"
	DisputeNeedsResponse        DisputeStatus = "needs_response"
	DisputeUnderReview          DisputeStatus = "under_review"
	DisputeWon                  DisputeStatus = "won"
	DisputeLost                 DisputeStatus = "lost"
	DisputePrevented            DisputeStatus = "prevented"

	StatementQueued  StatementRunStatus = "queued"
	StatementRunning StatementRunStatus = "running"
	StatementDone    StatementRunStatus = "done"
	StatementFailed  StatementRunStatus = "failed"

	BreakOpen     BreakStatus = "open"
	BreakResolved BreakStatus = "resolved"
)

// String returns the status as stored.
func (s GroupStatus) String() string { return string(s) }

// String returns the status as stored.
func (s RefundStatus) String() string { return string(s) }

// String returns the status as stored.
func (s CardStatus) String() string { return string(s) }

// String returns the status as stored.
func (s DisputeStatus) String() string { return string(s) }

// String returns the status as stored.
func (s StatementRunStatus) String() string { return string(s) }

// String returns the status as stored.
func (s BreakStatus) String() string { return string(s) }

// FlowKind is what a stock_flows row records; the numbers are stored in
// flow_type and name the stock counter's restore markers, so they never change.
type FlowKind int

// Stock-flow kinds: one row of each at most per order.
const (
	FlowLock          FlowKind = 1 // the create took the stock
	FlowSell          FlowKind = 2 // the delivery sold the order's card keys
	FlowCloseRestore  FlowKind = 3 // the close gave an unpaid order's stock back
	FlowRefundRestore FlowKind = 4 // an operator's refund gave a failed order's stock back
)

// FlowKinds lists every kind in number order.
var FlowKinds = []FlowKind{FlowLock, FlowSell, FlowCloseRestore, FlowRefundRestore}

// String names the kind for logs and audit reports.
func (k FlowKind) String() string {
	switch k {
	case FlowLock:
		return "lock"
	case FlowSell:
		return "sell"
	case FlowCloseRestore:
		return "close restore"
	case FlowRefundRestore:
		return "refund restore"
	}
	return fmt.Sprintf("flow(%d)", int(k))
}

// Disposition is what a recorded payment did to its order, stored as is
// in payments.disposition and shown as is in the admin views.
type Disposition string

// String returns the disposition as stored.
func (d Disposition) String() string { return string(d) }

// Payment dispositions.
const (
	PaymentApplied   Disposition = "applied"   // moved the order pending→paid
	PaymentLate      Disposition = "late"      // landed after the order closed: refund
	PaymentDuplicate Disposition = "duplicate" // a second trade for an order already paid: refund
	PaymentMismatch  Disposition = "mismatch"  // wrong amount: refund, alert
	// PaymentHeld: its trade already pays another order. It is not a
	// payments row (the trade has one) but a held_payments row, held for an
	// operator and alerted; never delivered, never refunded automatically.
	PaymentHeld Disposition = "held"
)
