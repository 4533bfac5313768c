// Package pay is the one interface orderflow takes money through. Each
// provider (the simulator, Alipay, WeChat Pay, Stripe) lives in a package of
// its own under this one and speaks its provider's wire format through that
// provider's SDK; the domain sees only the types here, in cents.
package pay

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// Provider names, as ORDERFLOW_PAY_PROVIDERS and the checkout call spell them.
const (
	NamePaysim = "paysim"
	NameAlipay = "alipay"
	NameWechat = "wechat"
	NameStripe = "stripe"
	// NameManual is money an operator saw arrive outside every provider (a
	// bank transfer, a provider's dashboard) and confirmed by hand. It is
	// never enabled in the Registry: no provider can be asked about it or
	// return it, so its refunds go to an operator.
	NameManual = "manual"
)

// Refund statuses a provider reports, the values refunds.provider_status holds.
const (
	RefundProcessing = "processing"
	RefundSucceeded  = "succeeded"
	RefundFailed     = "failed"
)

// ErrNotFound is a query's answer for something the provider never saw
// (a payment never started, a refund never received: safe to send).
var ErrNotFound = errors.New("provider does not know it")

// ErrBadSignature is a notification that failed verification; nothing in it
// may be read or acted on.
var ErrBadSignature = errors.New("notification signature does not verify")

// CheckoutRequest starts a payment for one order at one provider.
type CheckoutRequest struct {
	OrderNo     string
	AmountCents int64
	Subject     string    // shown to the buyer; never a card code
	ExpiresAt   time.Time // the payment must not be payable past this (the order's expiry)
}

// Checkout is what the buyer's page needs to pay. Exactly one of PayURL,
// QRCode and ClientSecret is set, by provider.
type Checkout struct {
	Ref          string // the provider's id of this payment when it has one at creation (Stripe's PaymentIntent id)
	PayURL       string // Alipay page pay, the simulator
	QRCode       string // Alipay precreate / WeChat Native code_url content
	ClientSecret string // Stripe PaymentIntent client_secret
	ExpiresAt    time.Time
}

// Paid is a verified, successful payment, from a notification or a query.
type Paid struct {
	OrderNo     string
	TradeNo     string // unique per provider
	AmountCents int64
	// At is the provider's own time of the payment (the statement day it
	// belongs to); zero when the provider's message gave none.
	At time.Time
}

// RefundUpdate is a verified refund status from a notification. RefundNo
// is orderflow's refund number (RefundRequest.RefundNo) when the refund is
// orderflow's; for one made elsewhere (the provider's dashboard) it is ""
// or a number the provider made up. The rest is filled when the
// notification carries it, so that a refund orderflow never asked for can
// be recorded as its statement line would be (pay.StatementLine).
type RefundUpdate struct {
	RefundNo string
	Status   string // Refund*
	// Ref is the provider's own id of the refund (StatementLine.Ref).
	Ref string
	// TradeNo is the refunded payment, as Paid.TradeNo names it.
	TradeNo     string
	AmountCents int64 // this refund
	// At is the provider's own time of the refund; zero when not given.
	At time.Time
}

// DisputeUpdate is a verified dispute (chargeback) status: the dispute as
// the provider holds it now, whichever of its events carried it.
type DisputeUpdate struct {
	ID            string // the provider's dispute id
	TradeNo       string // the disputed payment, as Paid.TradeNo names it
	Status        string // the provider's status (model.DisputeStatus names)
	Reason        string
	AmountCents   int64
	EvidenceDueBy time.Time // zero when the provider gave none
	Created       time.Time
}

// Event is one verified notification: a payment, a refund update, a
// dispute, or none (an event type the product ignores, acknowledged all
// the same).
type Event struct {
	Paid    *Paid
	Refund  *RefundUpdate
	Dispute *DisputeUpdate
}

// RefundRequest returns a trade's money; RefundNo is the provider's
// idempotency key (Alipay out_request_no, WeChat out_refund_no, Stripe
// Idempotency-Key), so a re-send can never refund twice.
type RefundRequest struct {
	RefundNo    string
	OrderNo     string
	TradeNo     string
	AmountCents int64 // this refund
	TotalCents  int64 // the whole payment (WeChat wants both)
}

// Provider is one payment provider. Every call that crosses the network may
// return an error meaning "outcome unknown": the caller asks (QueryRefund,
// QueryPayment) before it acts again.
type Provider interface {
	// Name is the provider's name (Name*).
	Name() string
	// Checkout starts a payment for the order or, called again, returns
	// the one already started (the provider dedups on the order number).
	Checkout(ctx context.Context, req CheckoutRequest) (*Checkout, error)
	// Parse verifies a notification with the provider's key before it reads
	// anything (ErrBadSignature otherwise) and returns what it says.
	Parse(r *http.Request, body []byte) (*Event, error)
	// Answer writes the provider's answer convention: ok means recorded;
	// anything else makes the provider send it again.
	Answer(w http.ResponseWriter, ok bool)
	// QueryPayment asks whether the order's payment succeeded: a *Paid when
	// it did, nil when it has not (yet), ErrNotFound when never started.
	// ref is Checkout.Ref when the provider gave one.
	QueryPayment(ctx context.Context, orderNo, ref string) (*Paid, error)
	// Refund sends a refund and returns the provider's status (Refund*).
	Refund(ctx context.Context, req RefundRequest) (string, error)
	// QueryRefund returns a refund's status, or ErrNotFound.
	QueryRefund(ctx context.Context, req RefundRequest) (string, error)
}
