package stripe

import (
	"fmt"
	"time"
)

// dispute is a chargeback on a succeeded PaymentIntent's charge.
type dispute struct {
	ID, Intent, Currency, Status, Reason string
	Amount                               int64
	DueBy, Created                       time.Time
}

// DisputeEvidenceWindow is how long after opening a dispute's evidence is
// due (Stripe's is set by the card network, typically 7 to 21 days).
const DisputeEvidenceWindow = 7 * 24 * time.Hour

// DisputeFee is what Stripe charges for a dispute, in cents, on the
// balance transaction that takes the disputed amount.
const DisputeFee = 1500

// OpenDispute opens a chargeback (needs_response, for the whole amount) on
// the order's paid PaymentIntent, as a card holder's bank would, and
// returns its id and its signed charge.dispute.created webhook, unsent:
// the caller sends it (as often as it likes, as Stripe may).
func (f *Fake) OpenDispute(orderNo, reason string) (string, *Notification, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in := f.intentLocked(orderNo)
	if in == nil || in.Status != "succeeded" {
		return "", nil, fmt.Errorf("stripe fake: no paid payment intent for order %s", orderNo)
	}
	now := f.now()
	d := &dispute{ID: "du_" + randHex(12), Intent: in.ID, Currency: in.Currency, Status: "needs_response",
		Reason: reason, Amount: in.Received, DueBy: now.Add(DisputeEvidenceWindow), Created: now}
	f.disputes[d.ID] = d
	// Stripe takes the disputed amount and its dispute fee at once.
	f.ledger.add(&txn{Type: "adjustment", Category: "dispute", Created: now,
		Amount: -d.Amount, Fee: DisputeFee, Currency: d.Currency, Ref: d.ID, dispute: d})
	return d.ID, f.eventLocked("charge.dispute.created", d.object(), f.WebhookSecret, time.Time{}), nil
}

// UpdateDispute moves a dispute to status (under_review when evidence is
// sent) and returns its signed charge.dispute.updated, unsent.
func (f *Fake) UpdateDispute(id, status string) (*Notification, error) {
	return f.moveDispute(id, status, "charge.dispute.updated")
}

// CloseDispute closes a dispute won or lost and returns its signed
// charge.dispute.closed, unsent.
func (f *Fake) CloseDispute(id, status string) (*Notification, error) {
	return f.moveDispute(id, status, "charge.dispute.closed")
}

func (f *Fake) moveDispute(id, status, typ string) (*Notification, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.disputes[id]
	if d == nil {
		return nil, fmt.Errorf("stripe fake: no dispute %s", id)
	}
	if status == "won" && d.Status != "won" {
		// A won dispute gives the amount back (Stripe keeps the fee).
		f.ledger.add(&txn{Type: "adjustment", Category: "dispute_reversal", Created: f.now(),
			Amount: d.Amount, Currency: d.Currency, Ref: d.ID, dispute: d})
	}
	d.Status = status
	return f.eventLocked(typ, d.object(), f.WebhookSecret, time.Time{}), nil
}

// object is the dispute as Stripe's JSON; payment_intent and charge are
// ids, as Stripe sends them unexpanded in webhooks; f.mu held.
func (d *dispute) object() map[string]any {
	return map[string]any{
		"id": d.ID, "object": "dispute", "amount": d.Amount, "currency": d.Currency,
		"charge": chargeID(d.Intent), "payment_intent": d.Intent, "reason": d.Reason, "status": d.Status,
		"created": unix(d.Created), "livemode": false, "metadata": map[string]string{},
		"is_charge_refundable": false, "balance_transactions": []any{},
		"evidence_details": map[string]any{
			"due_by": unix(d.DueBy), "has_evidence": d.Status != "needs_response", "past_due": false, "submission_count": 0,
		},
	}
}
