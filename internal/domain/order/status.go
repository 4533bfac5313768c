package order

import "orderflow/model"

// Status is an order's status, as the API names it in a filter or a reply.
type Status = model.OrderStatus

// The statuses a caller outside the domain names.
const (
	StatusPending = model.OrderPending
	StatusPaid    = model.OrderPaid
	StatusClaimed = model.OrderClaimed
	StatusFailed  = model.OrderFailed
	StatusClosed  = model.OrderClosed
)

// ParseStatus is the status a name means ("paid", …); false for none.
func ParseStatus(name string) (Status, bool) { return model.ParseOrderStatus(name) }

// Event is one line of an object's ledger history (a status move).
type Event = model.Event
