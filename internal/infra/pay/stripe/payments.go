package stripe

import (
	"context"
	"fmt"
	"time"

	"orderflow/internal/infra/pay"

	sdk "github.com/stripe/stripe-go/v83"
)

// metaOrderNo is the metadata key that ties a PaymentIntent to its order.
const metaOrderNo = "order_no"

// intentKey is the Idempotency-Key of an order's PaymentIntent: one per
// (order, provider), so a repeated checkout gets the same intent back
// (Stripe keeps keys 24 hours, far past any order's expiry).
func intentKey(orderNo string) string { return "orderflow-pi-" + orderNo }

// Checkout creates the order's PaymentIntent, or gets the same one back.
// Stripe intents do not expire: an order paid after its expiry is a late
// payment, refunded like any other.
func (p *Provider) Checkout(ctx context.Context, req pay.CheckoutRequest) (*pay.Checkout, error) {
	params := &sdk.PaymentIntentCreateParams{
		Amount:      sdk.Int64(req.AmountCents),
		Currency:    sdk.String(p.cfg.Currency),
		Description: sdk.String(req.Subject),
	}
	params.AddMetadata(metaOrderNo, req.OrderNo)
	params.SetIdempotencyKey(intentKey(req.OrderNo))
	pi, err := p.client.V1PaymentIntents.Create(ctx, params)
	if err != nil {
		return nil, callErr("create payment intent "+req.OrderNo, err)
	}
	return &pay.Checkout{Ref: pi.ID, ClientSecret: pi.ClientSecret, ExpiresAt: req.ExpiresAt}, nil
}

// QueryPayment retrieves the intent by ref; without one (the checkout's
// answer was lost) it searches by metadata[order_no]. Either way the intent
// comes with latest_charge expanded: the charge's created is the payment's
// time, the one its balance transaction (and so its statement day) carries.
func (p *Provider) QueryPayment(ctx context.Context, orderNo, ref string) (*pay.Paid, error) {
	if ref == "" {
		return p.searchPayment(ctx, orderNo)
	}
	params := &sdk.PaymentIntentRetrieveParams{}
	params.AddExpand("latest_charge")
	pi, err := p.client.V1PaymentIntents.Retrieve(ctx, ref, params)
	if notFound(err) {
		return nil, pay.ErrNotFound
	}
	if err != nil {
		return nil, callErr("retrieve payment intent "+orderNo, err)
	}
	if pi.Metadata[metaOrderNo] != orderNo {
		return nil, fmt.Errorf("stripe retrieve payment intent %s: it belongs to order %q", orderNo, pi.Metadata[metaOrderNo])
	}
	return p.paid(pi, 0)
}

func (p *Provider) searchPayment(ctx context.Context, orderNo string) (*pay.Paid, error) {
	params := &sdk.PaymentIntentSearchParams{}
	params.Query = fmt.Sprintf("metadata['%s']:'%s'", metaOrderNo, orderNo)
	params.AddExpand("data.latest_charge")
	found := false
	for pi, err := range p.client.V1PaymentIntents.Search(ctx, params) {
		if err != nil {
			return nil, callErr("search payment intents "+orderNo, err)
		}
		found = true
		if paid, err := p.paid(pi, 0); paid != nil || err != nil {
			return paid, err
		}
	}
	if !found {
		return nil, pay.ErrNotFound
	}
	return nil, nil
}

// paid maps a succeeded intent to a payment; nil while it is not. At is its
// latest charge's created when the charge is expanded, else eventAt (the
// payment_intent.succeeded event's created, Unix seconds; 0 for none).
func (p *Provider) paid(pi *sdk.PaymentIntent, eventAt int64) (*pay.Paid, error) {
	if pi == nil || pi.Status != sdk.PaymentIntentStatusSucceeded {
		return nil, nil
	}
	orderNo := pi.Metadata[metaOrderNo]
	if orderNo == "" {
		return nil, fmt.Errorf("stripe payment intent %s has no metadata[%s]", pi.ID, metaOrderNo)
	}
	if string(pi.Currency) != p.cfg.Currency {
		return nil, fmt.Errorf("stripe payment intent %s of order %s is in %s, not %s", pi.ID, orderNo, pi.Currency, p.cfg.Currency)
	}
	amount := pi.AmountReceived
	if amount == 0 {
		amount = pi.Amount
	}
	paid := &pay.Paid{OrderNo: orderNo, TradeNo: pi.ID, AmountCents: amount}
	at := eventAt
	if pi.LatestCharge != nil && pi.LatestCharge.Created > 0 {
		at = pi.LatestCharge.Created
	}
	if at > 0 {
		paid.At = time.Unix(at, 0).UTC()
	}
	return paid, nil
}
