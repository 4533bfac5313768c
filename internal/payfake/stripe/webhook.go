package stripe

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"orderflow/internal/payfake"

	sdk "github.com/stripe/stripe-go/v83"
	"github.com/stripe/stripe-go/v83/webhook"
)

// Notification is one signed webhook, ready to POST (or to spoil).
type Notification struct{ payfake.Notification }

// Pay succeeds the order's PaymentIntent (found by metadata[order_no]), as
// the buyer confirming it would, and sends payment_intent.succeeded unless
// DropPayNotify is set. It returns the webhook (sent or not). The intent's
// charge is created at the fake's clock, and listed in its statement.
func (f *Fake) Pay(ctx context.Context, orderNo string) (*Notification, int, error) {
	f.mu.Lock()
	in := f.intentLocked(orderNo)
	if in == nil {
		f.mu.Unlock()
		return nil, 0, fmt.Errorf("stripe fake: no payment intent for order %s", orderNo)
	}
	if in.Status != "succeeded" { // paid again: the webhook once more, no second charge
		f.succeedLocked(in, in.Amount)
	}
	n := f.eventLocked("payment_intent.succeeded", in.object(), f.WebhookSecret, in.PaidAt)
	f.mu.Unlock()
	status, err := n.SendUnless(ctx, f.DropPayNotify.Load())
	return n, status, err
}

// PaymentNotification is a signed payment_intent.succeeded for the intent.
func (f *Fake) PaymentNotification(intentID string) (*Notification, error) {
	return f.intentEvent(intentID, f.WebhookSecret)
}

// MisSignedNotification is the same webhook signed with another secret.
func (f *Fake) MisSignedNotification(intentID string) (*Notification, error) {
	return f.intentEvent(intentID, "whsec_"+randHex(16))
}

func (f *Fake) intentEvent(intentID, secret string) (*Notification, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in := f.intents[intentID]
	if in == nil {
		return nil, fmt.Errorf("stripe fake: no payment intent %s", intentID)
	}
	return f.eventLocked("payment_intent.succeeded", in.object(), secret, in.PaidAt), nil
}

// ForgedNotification is a payment_intent.succeeded for the order's intent
// that the buyer has not paid (the fake's state stays as it is), as a
// forger would send it: signed with the endpoint's secret (then spoil it
// with Tampered) or, misSign, with another.
func (f *Fake) ForgedNotification(orderNo string, misSign bool) (*Notification, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in := f.intentLocked(orderNo)
	if in == nil {
		return nil, fmt.Errorf("stripe fake: no payment intent for order %s", orderNo)
	}
	c := *in
	c.Status, c.Received = "succeeded", c.Amount
	secret := f.WebhookSecret
	if misSign {
		secret = "whsec_" + randHex(16)
	}
	return f.eventLocked("payment_intent.succeeded", c.object(), secret, time.Time{}), nil
}

// IntentID is the id of the order's PaymentIntent, its trade number.
func (f *Fake) IntentID(orderNo string) string {
	return payfake.Lookup(&f.mu, f.byOrder, orderNo, func(in *intent) string { return in.ID })
}

// intentLocked is the order's first PaymentIntent; f.mu held.
func (f *Fake) intentLocked(orderNo string) *intent { return f.byOrder[orderNo] }

// Tampered is a copy of n whose body changed after signing (a larger amount).
func (n *Notification) Tampered() *Notification {
	return &Notification{*n.Spoiled(`"amount":`, `1`)}
}

// eventLocked wraps object in a Stripe event created at created (the
// fake's clock when zero) and signs it at the real time; f.mu held.
func (f *Fake) eventLocked(typ string, object map[string]any, secret string, created time.Time) *Notification {
	if created.IsZero() {
		created = f.now()
	}
	body := encode(map[string]any{
		"id": "evt_" + randHex(12), "object": "event", "api_version": sdk.APIVersion,
		"created": created.Unix(), "type": typ, "data": map[string]any{"object": object},
		"livemode": false, "pending_webhooks": 1,
		"request": map[string]any{"id": nil, "idempotency_key": nil},
	})
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{
		Payload: body, Secret: secret, Timestamp: time.Now(),
	})
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Stripe-Signature", signed.Header)
	return &Notification{payfake.Notification{URL: f.webhookURL, Header: h, Body: body}}
}

// sendAsyncLocked delivers a webhook in the background, retrying a few
// times on a non-2xx as Stripe does (on a much shorter schedule); f.mu held.
func (f *Fake) sendAsyncLocked(typ string, object map[string]any) {
	n := f.eventLocked(typ, object, f.WebhookSecret, time.Time{})
	if n.URL == "" {
		return
	}
	f.sent.Go(&n.Notification)
}
