// Package paysim simulates orderflow's payment provider: it serves the
// provider's refund protocol, sends signed payment notifications and refund
// callbacks to orderflow, counts how often each refund was executed, and can
// be told to fail, time out or delay a share of calls. It publishes a signed
// daily statement of what it really took and refunded (statement.go), with
// knobs that make money move where orderflow cannot see it: a dashboard
// refund, a payment never notified, a statement line dropped or altered.
//
// It runs in-process (tests mount Sim.Handler on a real listener) or as its
// own process (cmd/paysim).
package paysim

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"orderflow/internal/payfake"

	"go.uber.org/zap"
)

// Sim is a payment-provider simulator. Create it with New; it is safe for
// concurrent use. Call Close to stop its background callbacks.
type Sim struct {
	// StatementKnobs spoil the statement: a ref is a line's Ref (a trade
	// number, a refund's out_request_no or dashboard id); an altered line
	// lists the cents instead of what really moved.
	payfake.StatementKnobs

	secret    string
	notifyURL string
	log       *zap.Logger
	// out sends notifications and callbacks; its timeout bounds one attempt so
	// a stuck orderflow cannot pin goroutines forever.
	out *http.Client

	// ctx is cancelled by Close; background work and hanging calls watch it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex // guards everything below
	rng   *rand.Rand
	knobs Knobs
	// refunds holds every out_request_no the simulator was called with or
	// told about, applied or not.
	refunds         map[string]*refund
	payments        map[string]notification // by order_no: what GET /payments/{order_no} answers
	trades          map[string]*trade       // by trade_no: what was paid, which its refunds never pass
	clock           func() time.Time        // stamps every payment and refund (SetClock)
	book            book                    // the statement lines, by day, and the statement knobs
	paymentsSent    int64
	callbacksSent   int64
	callbacksFailed int64
}

// Knobs are the fault-injection settings that can change while the simulator
// runs (Sim.SetKnobs, or GET/POST /admin/config with JSON fields fail_rate,
// timeout_rate, delay_ms, timeout_delay_ms, callback_delay_ms).
type Knobs struct {
	// FailRate is the share of refund calls answered 500.
	FailRate float64
	// TimeoutRate is the share of refund calls that hang, then answer 504.
	TimeoutRate float64
	// Delay is added to every refund call.
	Delay time.Duration
	// TimeoutDelay is how long an injected timeout hangs.
	TimeoutDelay time.Duration
	// CallbackDelay is how long new refunds stay "processing".
	CallbackDelay time.Duration
}

// New returns a simulator configured by cfg.
func New(cfg Config) *Sim {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	seed := uint64(cfg.Seed)
	return &Sim{
		secret:    cfg.Secret,
		notifyURL: cfg.NotifyBaseURL,
		log:       cfg.Logger,
		out:       &http.Client{Timeout: 10 * time.Second},
		ctx:       ctx,
		cancel:    cancel,
		rng:       rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		knobs: Knobs{
			FailRate:      cfg.FailRate,
			TimeoutRate:   cfg.TimeoutRate,
			Delay:         cfg.Delay,
			TimeoutDelay:  cfg.TimeoutDelay,
			CallbackDelay: cfg.CallbackDelay,
		},
		refunds:  make(map[string]*refund),
		payments: make(map[string]notification),
		trades:   make(map[string]*trade),
		clock:    time.Now,
		book:     newBook(),
	}
}

// Handler returns the simulator's HTTP routes.
//
// Provider routes (/refunds…, /payments…, /statements) require a valid
// X-Signature over the raw body (the empty body for GET); the statement's
// answer is signed the same way. The /admin/… routes are the test harness's
// and are deliberately unsigned: the simulator is meant to listen on loopback
// only, and the harness should not need the shared secret to drive it.
func (s *Sim) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /refunds", s.signed(s.handleCreateRefund))
	mux.Handle("GET /refunds/{out_request_no}", s.signed(s.handleQueryRefund))
	mux.Handle("GET /payments/{order_no}", s.signed(s.handleQueryPayment))
	mux.Handle("GET /statements", s.signed(s.handleStatement))
	mux.HandleFunc("POST /admin/refunds/{out_request_no}/fail", s.handleFailRefund)
	mux.HandleFunc("GET /admin/stats", s.handleStats)
	mux.HandleFunc("GET /admin/config", s.handleGetKnobs)
	mux.HandleFunc("POST /admin/config", s.handlePostKnobs)
	mux.HandleFunc("POST /admin/pay", s.handlePay)
	mux.HandleFunc("GET /checkout/{order_no}", s.handleCheckout)
	s.statementAdminRoutes(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no route for "+r.Method+" "+r.URL.Path)
	})
	return mux
}

// Close stops pending refund completions and callback deliveries and waits
// for them to return. Call it after the HTTP server has shut down.
func (s *Sim) Close() {
	s.cancel()
	s.wg.Wait()
}

// Knobs returns the current fault-injection settings.
func (s *Sim) Knobs() Knobs {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.knobs
}

// SetKnobs replaces all fault-injection settings at once.
func (s *Sim) SetKnobs(k Knobs) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setKnobsLocked(k)
}

// setKnobsLocked stores k, clamped. s.mu must be held.
func (s *Sim) setKnobsLocked(k Knobs) {
	s.knobs = Knobs{
		FailRate:      clampRate(k.FailRate),
		TimeoutRate:   clampRate(k.TimeoutRate),
		Delay:         max(k.Delay, 0),
		TimeoutDelay:  k.TimeoutDelay,
		CallbackDelay: max(k.CallbackDelay, 0),
	}
	if s.knobs.TimeoutDelay <= 0 {
		s.knobs.TimeoutDelay = DefaultTimeoutDelay
	}
}

// SetFailRate sets the share of refund calls answered 500.
func (s *Sim) SetFailRate(r float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.knobs.FailRate = clampRate(r)
}

// SetTimeoutRate sets the share of refund calls that hang, then answer 504.
func (s *Sim) SetTimeoutRate(r float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.knobs.TimeoutRate = clampRate(r)
}

// SetDelay sets the latency added to every refund call.
func (s *Sim) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.knobs.Delay = max(d, 0)
}

// SetCallbackDelay sets how long new refunds stay "processing"; zero makes
// them succeed in the create answer.
func (s *Sim) SetCallbackDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.knobs.CallbackDelay = max(d, 0)
}

// sleep waits for d, or until the request or the simulator is done.
// It reports whether the full duration elapsed.
func (s *Sim) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.ctx.Done():
		return false
	}
}

// goBackground runs f as tracked background work so Close can wait for it.
func (s *Sim) goBackground(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}
