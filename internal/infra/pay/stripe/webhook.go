package stripe

import (
	"encoding/json"
	"fmt"
	"net/http"

	"orderflow/internal/infra/pay"

	sdk "github.com/stripe/stripe-go/v83"
	"github.com/stripe/stripe-go/v83/webhook"
)

// Parse checks Stripe-Signature (HMAC-SHA256 under the endpoint's secret,
// timestamp within the SDK's tolerance) before it reads anything, then
// builds the event with webhook.ConstructEvent. payment_intent.succeeded
// pays; refund.created/updated/failed carry a refund's status, orderflow's
// or one made in the Dashboard (refunds.go);
// charge.dispute.created/updated/closed a dispute's (disputes.go); any
// other type is acknowledged and ignored.
func (p *Provider) Parse(r *http.Request, body []byte) (*pay.Event, error) {
	header := r.Header.Get("Stripe-Signature")
	if err := webhook.ValidatePayload(body, header, p.cfg.WebhookSecret); err != nil {
		return nil, pay.ErrBadSignature
	}
	ev, err := webhook.ConstructEvent(body, header, p.cfg.WebhookSecret)
	if err != nil {
		// Signed but for another API release: the endpoint must be created
		// with the SDK's version (docs/stripe.md).
		return nil, fmt.Errorf("stripe webhook: event API version %q, want %s", ev.APIVersion, sdk.APIVersion)
	}
	if ev.Data == nil {
		return &pay.Event{}, nil
	}
	switch ev.Type {
	case "payment_intent.succeeded":
		var pi sdk.PaymentIntent
		if err := json.Unmarshal(ev.Data.Raw, &pi); err != nil {
			return nil, fmt.Errorf("stripe webhook %s: decode payment intent: %w", ev.ID, err)
		}
		// A webhook's intent names its charge by id only; the event is
		// created when the intent succeeds, its charge a moment before.
		paid, err := p.paid(&pi, ev.Created)
		if err != nil {
			return nil, err
		}
		return &pay.Event{Paid: paid}, nil
	case "refund.created", "refund.updated", "refund.failed":
		u, err := p.refundUpdate(ev.ID, ev.Data.Raw)
		if err != nil {
			return nil, err
		}
		return &pay.Event{Refund: u}, nil
	default:
		if disputeEvents[ev.Type] {
			d, err := dispute(ev.ID, ev.Data.Raw)
			if err != nil {
				return nil, err
			}
			return &pay.Event{Dispute: d}, nil
		}
		return &pay.Event{}, nil
	}
}
