// Package paytest is what the provider packages' tests share: a notify
// endpoint that parses with the provider under test, and the checks every
// provider must pass the same way (checkout, spoiled notifications, a
// refund whose answer never came, configuration errors).
package paytest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"orderflow/internal/infra/pay"
	"orderflow/internal/payfake"
)

// Endpoint is a notify (webhook) endpoint: what arrives is parsed by the
// provider under test and answered in its convention; what parses is kept.
type Endpoint struct {
	// URL is where the fake sends its notifications.
	URL string

	mu     sync.Mutex
	p      pay.Provider
	events []*pay.Event
}

// NewEndpoint starts an endpoint, closed when the test ends. It answers
// nothing until Use names the provider.
func NewEndpoint(t *testing.T) *Endpoint {
	t.Helper()
	e := &Endpoint{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		p := e.p
		e.mu.Unlock()
		ev, err := p.Parse(r, body)
		if err == nil {
			e.mu.Lock()
			e.events = append(e.events, ev)
			e.mu.Unlock()
		}
		p.Answer(w, err == nil)
	}))
	t.Cleanup(srv.Close)
	e.URL = srv.URL
	return e
}

// Use names the provider that parses and answers.
func (e *Endpoint) Use(p pay.Provider) {
	e.mu.Lock()
	e.p = p
	e.mu.Unlock()
}

// WaitEvents polls until at least n notifications have parsed and returns
// them all; the test fails after five seconds.
func (e *Endpoint) WaitEvents(t *testing.T, n int) []*pay.Event {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		e.mu.Lock()
		got := append([]*pay.Event(nil), e.events...)
		e.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d notifications, want %d", len(got), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Checkout starts the order's payment of cents at p; the test fails on an error.
func Checkout(t *testing.T, p pay.Provider, orderNo string, cents int64) *pay.Checkout {
	t.Helper()
	co, err := p.Checkout(context.Background(), pay.CheckoutRequest{
		OrderNo: orderNo, AmountCents: cents, Subject: "steam-50", ExpiresAt: time.Now().Add(15 * time.Minute),
	})
	if err != nil {
		t.Fatal(err)
	}
	return co
}

// CheckSpoiled checks that each spoiled notification, by name, does not
// parse (ErrBadSignature) and that sending it gets an answer refused says
// is a refusal.
func CheckSpoiled(t *testing.T, p pay.Provider, spoiled map[string]*payfake.Notification, refused func(status int) bool) {
	t.Helper()
	for name, n := range spoiled {
		req := httptest.NewRequest(http.MethodPost, "/", nil)
		req.Header = n.Header
		if _, err := p.Parse(req, n.Body); !errors.Is(err, pay.ErrBadSignature) {
			t.Errorf("%s: Parse = %v, want ErrBadSignature", name, err)
		}
		status, err := n.Send(context.Background())
		if err != nil || !refused(status) {
			t.Errorf("%s: answered %d, %v; want a refusal", name, status, err)
		}
	}
}

// CheckRefundTimeoutThenQuery sends a refund the fake records but never
// answers (the caller has set its RefundTimeout): the call fails, a query
// finds the refund succeeded, and the fake got one send (sends counts them
// by refund number) — the client must not retry on its own.
func CheckRefundTimeoutThenQuery(t *testing.T, p pay.Provider, req pay.RefundRequest, sends func(refundNo string) int) {
	t.Helper()
	ctx := context.Background()
	if _, err := p.Refund(ctx, req); err == nil {
		t.Fatal("refund whose answer never came returned no error")
	}
	if status, err := p.QueryRefund(ctx, req); err != nil || status != pay.RefundSucceeded {
		t.Fatalf("query after the timeout = %q, %v; want succeeded", status, err)
	}
	if n := sends(req.RefundNo); n != 1 {
		t.Fatalf("fake got %d refund sends, want 1 (the client must not retry on its own)", n)
	}
}

// ConfigCase is a change to a good configuration and the setting its
// error must name.
type ConfigCase[C any] struct {
	Mutate func(*C)
	Want   string
}

// CheckConfig checks that good passes check and that each case, by name,
// fails with an error naming its setting and never quoting secret.
func CheckConfig[C any](t *testing.T, good C, check func(C) error, secret string, cases map[string]ConfigCase[C]) {
	t.Helper()
	if err := check(good); err != nil {
		t.Fatalf("good config: %v", err)
	}
	for name, tc := range cases {
		c := good
		tc.Mutate(&c)
		err := check(c)
		if err == nil || !strings.Contains(err.Error(), tc.Want) {
			t.Errorf("%s: %v, want an error naming %s", name, err, tc.Want)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error carries secret material", name)
		}
	}
}

// CheckRefundSent sends a refund never sent before: QueryRefund first finds
// nothing (ErrNotFound), then Refund answers processing.
func CheckRefundSent(t *testing.T, p pay.Provider, req pay.RefundRequest) {
	t.Helper()
	ctx := context.Background()
	if _, err := p.QueryRefund(ctx, req); !errors.Is(err, pay.ErrNotFound) {
		t.Fatalf("query before sending: %v, want ErrNotFound", err)
	}
	status, err := p.Refund(ctx, req)
	if err != nil || status != pay.RefundProcessing {
		t.Fatalf("refund = %q, %v; want processing", status, err)
	}
}

// CheckStatementStops walks the day's statement with an fn that fails:
// the walk stops at its first page and returns fn's error.
func CheckStatementStops(t *testing.T, s pay.Statements, day string) {
	t.Helper()
	stop := errors.New("stop")
	calls := 0
	err := s.Statement(context.Background(), day, func([]pay.StatementLine) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("fn failing: Statement = %v after %d calls, want fn's error after 1", err, calls)
	}
}

// RefundLine is the statement's refund line whose Ref is ref, read as the
// succeeded refund a notification of it would report; the test fails when
// the statement does not list it.
func RefundLine(t *testing.T, lines []pay.StatementLine, ref string) (pay.StatementLine, pay.RefundUpdate) {
	t.Helper()
	for _, l := range lines {
		if l.Kind == pay.LineRefund && l.Ref == ref {
			return l, pay.RefundUpdate{RefundNo: l.RefundNo, Status: pay.RefundSucceeded, Ref: l.Ref, TradeNo: l.TradeNo,
				AmountCents: l.AmountCents, At: l.At}
		}
	}
	t.Fatalf("the statement does not list refund %s: %+v", ref, lines)
	return pay.StatementLine{}, pay.RefundUpdate{}
}

// CheckRefundResent checks a refund already sent and settled: a query finds
// it succeeded, sending it again (with want as its status, unless want is
// "") is no error, and the fake holds that one refund after two sends.
func CheckRefundResent(t *testing.T, p pay.Provider, req pay.RefundRequest, want string, sends func(refundNo string) int, held func() int) {
	t.Helper()
	ctx := context.Background()
	if status, err := p.QueryRefund(ctx, req); err != nil || status != pay.RefundSucceeded {
		t.Fatalf("query = %q, %v; want succeeded", status, err)
	}
	if status, err := p.Refund(ctx, req); err != nil || (want != "" && status != want) {
		t.Fatalf("re-sent refund = %q, %v; want no error (and %q)", status, err, want)
	}
	if n, h := sends(req.RefundNo), held(); n != 2 || h != 1 {
		t.Fatalf("fake got %d sends and holds %d refunds; want 2 sends of 1 refund", n, h)
	}
}
