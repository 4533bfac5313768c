package model

import "fmt"

// OrderStatus is an order's state; the numbers follow seed 002 and SPEC.
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

// orderMoves is THE transition table: every allowed order move and nothing else.
var orderMoves = map[OrderStatus][]OrderStatus{
	OrderPending:   {OrderPaid, OrderClosed},
	OrderPaid:      {OrderClaimed, OrderFailed},
	OrderClaimed:   {OrderFinished, OrderPaid, OrderFailed},
	OrderFailed:    {OrderPaid, OrderRefunding},
	OrderClosed:    {OrderRefunding},
	OrderRefunding: {OrderRefunded},
}

// CanMoveOrder reports whether from→to is an allowed order move.
func CanMoveOrder(from, to OrderStatus) bool {
	for _, t := range orderMoves[from] {
		if t == to {
			return true
		}
	}
	return false
}

// Terminal reports whether no automatic move leaves s.
func (s OrderStatus) Terminal() bool {
	return s == OrderFinished || s == OrderRefunded || s == OrderClosed || s == OrderFailed
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

// Card key statuses.
const (
	CardUnsold   = "UNSOLD"
	CardLocked   = "LOCKED"
	CardSold     = "SOLD"
	CardRecycled = "RECYCLED"
)

// Stock-flow types.
const (
	FlowLock          = 1
	FlowSell          = 2
	FlowCloseRestore  = 3
	FlowRefundRestore = 4
)

// Payment dispositions: what a recorded payment did to its order.
const (
	PaymentApplied   = "applied"   // moved the order pending→paid
	PaymentLate      = "late"      // landed after the order closed: refund
	PaymentDuplicate = "duplicate" // a second trade for an order already paid: refund
	PaymentMismatch  = "mismatch"  // wrong amount: refund, alert
	// PaymentHeld: its trade already pays another order. It is not a
	// payments row (the trade has one) but a held_payments row, held for an
	// operator and alerted; never delivered, never refunded automatically.
	PaymentHeld = "held"
)
