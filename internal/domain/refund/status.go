package refund

import "orderflow/model"

// Status is a refund's status, as the API names it in a filter or a reply.
type Status = model.RefundStatus

// The statuses a caller outside the domain names.
const (
	StatusProcessing = model.RefundProcessing
	StatusSucceeded  = model.RefundSucceeded
	StatusManual     = model.RefundManual
)

// ParseStatus is the status a name means; false for none.
func ParseStatus(name string) (Status, bool) { return model.RefundMachine.Parse(name) }

// Refund is one refund as the ledger holds it.
type Refund = model.Refund
