// Package stripe is a small stateful Stripe for tests (stripe-mock answers
// every call with fixtures and keeps nothing, so a refund could never be
// found again): the form-encoded API with JSON objects as Stripe returns
// them for PaymentIntents (create, retrieve, search by metadata) and refunds
// (create, retrieve, list by payment_intent), Bearer-key auth, idempotency on
// Idempotency-Key, disputes opened, updated and closed by the test
// (disputes.go), the balance transactions of everything it processed, paged
// as Stripe pages them (statement.go), and webhooks signed like Stripe
// (t=…,v1=… HMAC-SHA256, by stripe-go's webhook.GenerateTestSignedPayload).
// Switches drop webhooks, make the refund call time out after it was
// recorded, and spoil webhooks; a settable clock dates what it records.
package stripe

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"orderflow/internal/payfake"
)

// Fake is one running Stripe. Its switches may be flipped at any time.
type Fake struct {
	// URL is the API base URL (ORDERFLOW_STRIPE_API_URL).
	URL string
	// SecretKey and WebhookSecret configure orderflow for this fake.
	SecretKey     string
	WebhookSecret string
	// StatementKnobs spoil the statement: a ref is a payment's intent id
	// (its charge), a refund's or a dispute's id; an altered payment's
	// charge balance transaction lists the cents, the charge itself keeps
	// what was paid.
	payfake.StatementKnobs

	// DropPayNotify: Pay succeeds the intent but sends no webhook.
	DropPayNotify atomic.Bool
	// DropRefundNotify: refunds succeed with no refund.updated webhook.
	DropRefundNotify atomic.Bool
	// RefundTimeout: a refund is recorded (and succeeds) but its answer
	// never comes; the caller's timeout fires.
	RefundTimeout atomic.Bool
	// Currency is the currency of an intent the fake starts itself
	// (PayUnseen for an order never checked out); set it before use.
	Currency string

	srv  *httptest.Server
	sent *payfake.Deliveries // webhooks in flight, held answers

	mu         sync.Mutex
	now        func() time.Time // SetClock; every time the fake records
	webhookURL string
	intents    map[string]*intent    // by id
	byOrder    map[string]*intent    // an order's first intent, by metadata[order_no]
	refunds    map[string]*refund    // by id
	byIntent   map[string][]*refund  // a PaymentIntent's refunds
	idem       map[string]idemAnswer // by Idempotency-Key
	sends      payfake.Sends         // refund creations received, by Idempotency-Key
	disputes   map[string]*dispute   // by id
	ledger     txnLedger             // balance transactions (statement.go)
}

type intent struct {
	ID, Currency, Description, Status, Secret string
	Amount, Received                          int64
	Metadata                                  map[string]string
	Created                                   time.Time
	PaidAt                                    time.Time // its charge's created, once succeeded
	TxnID                                     string    // its charge's balance transaction
}

type refund struct {
	ID, Intent, Status string
	Amount             int64
	Metadata           map[string]string
	Created            time.Time
	TxnID              string // its balance transaction
}

// idemAnswer is the first answer under an Idempotency-Key, replayed to any
// request that repeats the key with the same parameters.
type idemAnswer struct {
	path, params string
	status       int
	body         []byte
}

// New starts a fake with a fresh secret key and webhook secret.
func New() *Fake {
	f := &Fake{
		SecretKey:     "sk_test_" + randHex(12),
		WebhookSecret: "whsec_" + randHex(16),
		Currency:      "cny",
		sent:          payfake.NewDeliveries(),
		now:           time.Now,
		intents:       map[string]*intent{},
		byOrder:       map[string]*intent{},
		refunds:       map[string]*refund{},
		byIntent:      map[string][]*refund{},
		idem:          map[string]idemAnswer{},
		disputes:      map[string]*dispute{},
	}
	f.srv = httptest.NewServer(f.routes())
	f.URL = f.srv.URL
	return f
}

// SetClock sets the clock every time the fake records is read from (an
// intent's, a charge's, a refund's, a dispute's created, an event's
// created), so a test can put payments on a past day; time.Now by default.
// Webhook signatures keep the real time: Stripe's tolerance is checked
// against the receiver's clock.
func (f *Fake) SetClock(now func() time.Time) {
	f.mu.Lock()
	f.now = now
	f.mu.Unlock()
}

// SetWebhookURL is the endpoint webhooks go to (a Dashboard setting at Stripe).
func (f *Fake) SetWebhookURL(u string) {
	f.mu.Lock()
	f.webhookURL = u
	f.mu.Unlock()
}

// Close stops the server after the webhooks in flight.
func (f *Fake) Close() {
	f.sent.Close(f.srv)
}

// RefundSends is how many refund creations arrived with Idempotency-Key key.
func (f *Fake) RefundSends(key string) int { return f.sends.Of(key) }

// Refunds is how many refunds the fake holds in all.
func (f *Fake) Refunds() int { return payfake.Len(&f.mu, f.refunds) }

func (f *Fake) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/payment_intents", f.authed(f.createIntent))
	mux.HandleFunc("GET /v1/payment_intents/search", f.authed(f.searchIntents))
	mux.HandleFunc("GET /v1/payment_intents/{id}", f.authed(f.retrieveIntent))
	mux.HandleFunc("POST /v1/refunds", f.authed(f.createRefund))
	mux.HandleFunc("GET /v1/refunds", f.authed(f.listRefunds))
	mux.HandleFunc("GET /v1/refunds/{id}", f.authed(f.retrieveRefund))
	mux.HandleFunc("GET /v1/balance_transactions", f.authed(f.listBalanceTransactions))
	return mux
}

// IntentRefunded is what the refunds of a PaymentIntent returned (or are
// returning), in cents.
func (f *Fake) IntentRefunded(intentID string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refundedLocked(intentID)
}

// randHex is payfake.RandHex, the fakes' ids and secrets.
var randHex = payfake.RandHex
