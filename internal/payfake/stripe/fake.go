// Package stripe is a small stateful Stripe for tests (stripe-mock answers
// every call with fixtures and keeps nothing, so a refund could never be
// found again): the form-encoded API with JSON objects as Stripe returns
// them for PaymentIntents (create, retrieve, search by metadata) and refunds
// (create, retrieve, list by payment_intent), Bearer-key auth, idempotency on
// Idempotency-Key, disputes opened, updated and closed by the test
// (disputes.go), and webhooks signed like Stripe (t=…,v1=… HMAC-SHA256,
// by stripe-go's webhook.GenerateTestSignedPayload). Switches drop webhooks,
// make the refund call time out after it was recorded, and spoil webhooks.
package stripe

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"
)

// Fake is one running Stripe. Its switches may be flipped at any time.
type Fake struct {
	// URL is the API base URL (ORDERFLOW_STRIPE_API_URL).
	URL string
	// SecretKey and WebhookSecret configure orderflow for this fake.
	SecretKey     string
	WebhookSecret string

	// DropPayNotify: Pay succeeds the intent but sends no webhook.
	DropPayNotify atomic.Bool
	// DropRefundNotify: refunds succeed with no refund.updated webhook.
	DropRefundNotify atomic.Bool
	// RefundTimeout: a refund is recorded (and succeeds) but its answer
	// never comes; the caller's timeout fires.
	RefundTimeout atomic.Bool

	srv  *httptest.Server
	hold chan struct{}  // closed by Close: releases held answers
	wg   sync.WaitGroup // webhooks in flight

	mu         sync.Mutex
	webhookURL string
	intents    map[string]*intent    // by id
	refunds    map[string]*refund    // by id
	idem       map[string]idemAnswer // by Idempotency-Key
	sends      map[string]int        // refund creations received, by Idempotency-Key
	disputes   map[string]*dispute   // by id
}

type intent struct {
	ID, Currency, Description, Status, Secret string
	Amount, Received                          int64
	Metadata                                  map[string]string
	Created                                   time.Time
}

type refund struct {
	ID, Intent, Status string
	Amount             int64
	Metadata           map[string]string
	Created            time.Time
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
		hold:          make(chan struct{}),
		intents:       map[string]*intent{},
		refunds:       map[string]*refund{},
		idem:          map[string]idemAnswer{},
		sends:         map[string]int{},
		disputes:      map[string]*dispute{},
	}
	f.srv = httptest.NewServer(f.routes())
	f.URL = f.srv.URL
	return f
}

// SetWebhookURL is the endpoint webhooks go to (a Dashboard setting at Stripe).
func (f *Fake) SetWebhookURL(u string) {
	f.mu.Lock()
	f.webhookURL = u
	f.mu.Unlock()
}

// Close stops the server after the webhooks in flight.
func (f *Fake) Close() {
	close(f.hold)
	f.srv.Close()
	f.wg.Wait()
}

// RefundSends is how many refund creations arrived with Idempotency-Key key.
func (f *Fake) RefundSends(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sends[key]
}

// Refunds is how many refunds the fake holds in all.
func (f *Fake) Refunds() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.refunds)
}

func (f *Fake) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/payment_intents", f.authed(f.createIntent))
	mux.HandleFunc("GET /v1/payment_intents/search", f.authed(f.searchIntents))
	mux.HandleFunc("GET /v1/payment_intents/{id}", f.authed(f.retrieveIntent))
	mux.HandleFunc("POST /v1/refunds", f.authed(f.createRefund))
	mux.HandleFunc("GET /v1/refunds", f.authed(f.listRefunds))
	mux.HandleFunc("GET /v1/refunds/{id}", f.authed(f.retrieveRefund))
	return mux
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// IntentRefunded is what the refunds of a PaymentIntent returned (or are
// returning), in cents.
func (f *Fake) IntentRefunded(intentID string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refundedLocked(intentID)
}
