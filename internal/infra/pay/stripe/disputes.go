package stripe

import (
	"encoding/json"
	"fmt"
	"time"

	"orderflow/internal/infra/pay"

	sdk "github.com/stripe/stripe-go/v83"
)

// disputeEvents are the dispute event types Parse maps: each carries the
// whole dispute as it is now, so any one of them says where it stands.
var disputeEvents = map[sdk.EventType]bool{
	"charge.dispute.created": true,
	"charge.dispute.updated": true,
	"charge.dispute.closed":  true,
}

// dispute reads a charge.dispute.* event's object. The trade number is the
// PaymentIntent's id (what Paid.TradeNo records); payment_intent arrives
// as an id or, expanded, as the object, and stripe-go reads both.
func dispute(eventID string, raw json.RawMessage) (*pay.DisputeUpdate, error) {
	var d sdk.Dispute
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("stripe webhook %s: decode dispute: %w", eventID, err)
	}
	if d.PaymentIntent == nil || d.PaymentIntent.ID == "" {
		return nil, fmt.Errorf("stripe webhook %s: dispute %s names no payment_intent", eventID, d.ID)
	}
	u := &pay.DisputeUpdate{
		ID: d.ID, TradeNo: d.PaymentIntent.ID, Status: string(d.Status), Reason: string(d.Reason),
		AmountCents: d.Amount, Created: time.Unix(d.Created, 0).UTC(),
	}
	if d.EvidenceDetails != nil && d.EvidenceDetails.DueBy > 0 {
		u.EvidenceDueBy = time.Unix(d.EvidenceDetails.DueBy, 0).UTC()
	}
	return u, nil
}
