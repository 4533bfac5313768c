package stripe

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"orderflow/internal/infra/pay"

	sdk "github.com/stripe/stripe-go/v83"
)

// metaRefundNo ties a Stripe refund to orderflow's refund.
const metaRefundNo = "refund_no"

// Refund creates a refund of the PaymentIntent (the trade number) with
// Idempotency-Key = refund_no: a re-send within Stripe's 24 hours returns
// the first refund; later, QueryRefund (asked first) finds it by metadata.
func (p *Provider) Refund(ctx context.Context, req pay.RefundRequest) (string, error) {
	params := &sdk.RefundCreateParams{
		PaymentIntent: sdk.String(req.TradeNo),
		Amount:        sdk.Int64(req.AmountCents),
	}
	params.AddMetadata(metaRefundNo, req.RefundNo)
	params.AddMetadata(metaOrderNo, req.OrderNo)
	params.SetIdempotencyKey(req.RefundNo)
	r, err := p.client.V1Refunds.Create(ctx, params)
	if err != nil {
		return "", callErr("create refund "+req.RefundNo, err)
	}
	return refundStatus(r.Status), nil
}

// QueryRefund lists the PaymentIntent's refunds and picks the one whose
// metadata[refund_no] is ours.
func (p *Provider) QueryRefund(ctx context.Context, req pay.RefundRequest) (string, error) {
	params := &sdk.RefundListParams{PaymentIntent: sdk.String(req.TradeNo)}
	for r, err := range p.client.V1Refunds.List(ctx, params) {
		if notFound(err) {
			return "", pay.ErrNotFound
		}
		if err != nil {
			return "", callErr("list refunds "+req.RefundNo, err)
		}
		if r.Metadata[metaRefundNo] == req.RefundNo {
			return refundStatus(r.Status), nil
		}
	}
	return "", pay.ErrNotFound
}

// refundStatus maps Stripe's refund status; requires_action waits on the
// customer, canceled and failed need a person.
func refundStatus(s sdk.RefundStatus) string {
	switch s {
	case sdk.RefundStatusSucceeded:
		return pay.RefundSucceeded
	case sdk.RefundStatusFailed, sdk.RefundStatusCanceled:
		return pay.RefundFailed
	default:
		return pay.RefundProcessing
	}
}

// refundUpdate reads a refund.* event's Refund. RefundNo is its
// metadata[refund_no], "" for a refund made in the Dashboard; Ref, TradeNo,
// AmountCents and At are what its balance transaction's statement line
// says (statement.go), so such a refund is recorded as that line would be.
func (p *Provider) refundUpdate(eventID string, raw json.RawMessage) (*pay.RefundUpdate, error) {
	var rf sdk.Refund
	if err := json.Unmarshal(raw, &rf); err != nil {
		return nil, fmt.Errorf("stripe webhook %s: decode refund: %w", eventID, err)
	}
	u := &pay.RefundUpdate{RefundNo: rf.Metadata[metaRefundNo], Status: refundStatus(rf.Status), Ref: rf.ID,
		TradeNo: paymentOf(rf.PaymentIntent, rf.Charge)}
	if rf.Created > 0 {
		u.At = time.Unix(rf.Created, 0).UTC()
	}
	// An amount in another currency than the account's is no cents of
	// ours: left 0, so the refund is not recorded from the event.
	if c := string(rf.Currency); c == "" || c == p.cfg.Currency {
		u.AmountCents = rf.Amount
	}
	return u, nil
}
