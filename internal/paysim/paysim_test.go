package paysim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	"orderflow/internal/infra/sign"

	"github.com/google/go-cmp/cmp"
)

const testSecret = "test-secret"

// receiver stands in for orderflow: it records every signed request it gets
// and answers with the status chosen by respond.
type receiver struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	got     []received
	respond func(path string, n int) int // n counts calls to path, from 1
	arrived chan received
}

type received struct {
	Path     string
	Body     []byte
	SigValid bool
}

func newReceiver(t *testing.T, respond func(path string, n int) int) *receiver {
	t.Helper()
	rc := &receiver{t: t, respond: respond, arrived: make(chan received, 1000)}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got := received{Path: r.URL.Path, Body: body, SigValid: sign.Valid(testSecret, body, r.Header.Get(sign.Header))}
		rc.mu.Lock()
		rc.got = append(rc.got, got)
		n := 0
		for _, g := range rc.got {
			if g.Path == r.URL.Path {
				n++
			}
		}
		rc.mu.Unlock()
		code := http.StatusOK
		if rc.respond != nil {
			code = rc.respond(r.URL.Path, n)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if code == http.StatusOK {
			_, _ = w.Write([]byte(`{"result":"success"}`))
		} else {
			_, _ = w.Write([]byte(`{"error":{"code":"busy","message":"try later"}}`))
		}
		rc.arrived <- got
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// wait returns the next request to path, failing the test after a while.
func (rc *receiver) wait(path string) received {
	rc.t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case g := <-rc.arrived:
			if g.Path == path {
				return g
			}
		case <-deadline:
			rc.t.Fatalf("no request to %s arrived", path)
		}
	}
}

func (rc *receiver) requests(path string) []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []received
	for _, g := range rc.got {
		if g.Path == path {
			out = append(out, g)
		}
	}
	return out
}

// testBundle is one simulator on a real port plus a client for it.
type testBundle struct {
	sim    *Sim
	url    string
	client *Client
}

func setup(t *testing.T, cfg Config) testBundle {
	t.Helper()
	cfg.Secret = testSecret
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	sim := New(cfg)
	srv := httptest.NewServer(sim.Handler())
	// Cleanups run last-in first-out: stop the server, then the background work.
	t.Cleanup(sim.Close)
	t.Cleanup(srv.Close)
	return testBundle{sim: sim, url: srv.URL, client: &Client{BaseURL: srv.URL, Secret: testSecret}}
}

func refundReq(no string) RefundRequest {
	return RefundRequest{OutRequestNo: no, TradeNo: "T1", OrderNo: "O1", AmountCents: 990}
}

// statusOf returns the HTTP status inside err, or 200 for nil.
func statusOf(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return http.StatusOK
	}
	var he *HTTPError
	if !errors.As(err, &he) {
		t.Fatalf("want an *HTTPError, got %v", err)
	}
	return he.StatusCode
}

func TestRefundIdempotentUnderConcurrency(t *testing.T) {
	tests := []struct {
		name          string
		callbackDelay time.Duration
		wantStatus    string
	}{
		{"succeeds at once", 0, StatusSucceeded},
		{"processing then callback", 50 * time.Millisecond, StatusProcessing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := newReceiver(t, nil)
			b := setup(t, Config{NotifyBaseURL: rc.srv.URL, CallbackDelay: tt.callbackDelay})
			ctx := context.Background()

			const n = 20
			var wg sync.WaitGroup
			got := make([]RefundStatus, n)
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() { got[i], errs[i] = b.client.Refund(ctx, refundReq("R-idem")) })
			}
			wg.Wait()
			for i := range n {
				if errs[i] != nil {
					t.Fatalf("call %d: %v", i, errs[i])
				}
				if diff := cmp.Diff(RefundStatus{OutRequestNo: "R-idem", Status: tt.wantStatus}, got[i]); diff != "" {
					t.Errorf("call %d answer (-want +got):\n%s", i, diff)
				}
			}

			if tt.callbackDelay > 0 {
				cb := rc.wait(refundNotifyPath)
				if !cb.SigValid {
					t.Error("callback signature invalid")
				}
			}
			st, err := b.client.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := RefundStats{Executed: 1, Calls: n, Status: StatusSucceeded}
			if diff := cmp.Diff(want, st.Refunds["R-idem"]); diff != "" {
				t.Errorf("stats (-want +got):\n%s", diff)
			}
			if st.MaxExecuted != 1 {
				t.Errorf("max_executed = %d, want 1", st.MaxExecuted)
			}
			if cbs := rc.requests(refundNotifyPath); len(cbs) > 1 {
				t.Errorf("%d callbacks sent for one refund, want at most 1", len(cbs))
			}
		})
	}
}

func TestSignatureRequired(t *testing.T) {
	b := setup(t, Config{})
	body, _ := json.Marshal(refundReq("R-sig"))
	tests := []struct {
		name, method, path string
		body               []byte
		sig                string
		wantCode           string
	}{
		{"post without signature", http.MethodPost, "/refunds", body, "", "missing_signature"},
		{"post signed with another secret", http.MethodPost, "/refunds", body, sign.Sum("other", body), "bad_signature"},
		{"post with tampered body", http.MethodPost, "/refunds", bytes.Replace(body, []byte("990"), []byte("991"), 1), sign.Sum(testSecret, body), "bad_signature"},
		{"post with garbage signature", http.MethodPost, "/refunds", body, "zz", "bad_signature"},
		{"get without signature", http.MethodGet, "/refunds/R-sig", nil, "", "missing_signature"},
		{"get signed over a body it did not send", http.MethodGet, "/refunds/R-sig", nil, sign.Sum(testSecret, []byte("x")), "bad_signature"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, b.url+tt.path, bytes.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if tt.sig != "" {
				req.Header.Set(sign.Header, tt.sig)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("status = %d, want 401", resp.StatusCode)
			}
			var eb errorBody
			if err := json.NewDecoder(resp.Body).Decode(&eb); err != nil {
				t.Fatalf("error body is not JSON: %v", err)
			}
			if eb.Error.Code != tt.wantCode || eb.Error.Message == "" {
				t.Errorf("error = %+v, want code %q and a message", eb.Error, tt.wantCode)
			}
		})
	}
	if st := b.sim.Stats(); len(st.Refunds) != 0 {
		t.Errorf("unsigned calls reached the ledger: %+v", st.Refunds)
	}
}

func TestQueryRefund(t *testing.T) {
	b := setup(t, Config{})
	ctx := context.Background()

	_, err := b.client.QueryRefund(ctx, "R-never")
	if got := statusOf(t, err); got != http.StatusNotFound {
		t.Fatalf("query of unknown refund: status %d (%v), want 404", got, err)
	}
	if _, err := b.client.Refund(ctx, refundReq("R-known")); err != nil {
		t.Fatal(err)
	}
	got, err := b.client.QueryRefund(ctx, "R-known")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(RefundStatus{OutRequestNo: "R-known", Status: StatusSucceeded}, got); diff != "" {
		t.Errorf("query (-want +got):\n%s", diff)
	}
	if q := b.sim.Stats().Refunds["R-known"].Queries; q != 1 {
		t.Errorf("queries = %d, want 1", q)
	}
}

func TestFailRateAnswers500WithoutRefunding(t *testing.T) {
	b := setup(t, Config{FailRate: 1})
	ctx := context.Background()

	for range 3 {
		_, err := b.client.Refund(ctx, refundReq("R-fail"))
		if got := statusOf(t, err); got != http.StatusInternalServerError {
			t.Fatalf("refund: status %d (%v), want 500", got, err)
		}
	}
	_, err := b.client.QueryRefund(ctx, "R-fail")
	if got := statusOf(t, err); got != http.StatusInternalServerError {
		t.Fatalf("query: status %d (%v), want 500", got, err)
	}
	if got := b.sim.Stats().Refunds["R-fail"]; got.Executed != 0 || got.Calls != 3 {
		t.Fatalf("after injected failures: %+v, want executed 0, calls 3", got)
	}

	b.sim.SetFailRate(0)
	if _, err := b.client.QueryRefund(ctx, "R-fail"); statusOf(t, err) != http.StatusNotFound {
		t.Errorf("a refund that only ever failed must be unknown to queries, got %v", err)
	}
	if _, err := b.client.Refund(ctx, refundReq("R-fail")); err != nil {
		t.Fatal(err)
	}
	if got := b.sim.Stats().Refunds["R-fail"]; got.Executed != 1 {
		t.Errorf("after recovery: executed %d, want 1", got.Executed)
	}
}

func TestTimeoutRateLeavesOutcomeUnknownButNeverDoubles(t *testing.T) {
	b := setup(t, Config{TimeoutRate: 1, TimeoutDelay: 20 * time.Millisecond})
	ctx := context.Background()

	const n = 30
	nos := make([]string, n)
	for i := range n {
		nos[i] = "R-to-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		_, err := b.client.Refund(ctx, refundReq(nos[i]))
		if got := statusOf(t, err); got != http.StatusGatewayTimeout {
			t.Fatalf("refund %s: status %d (%v), want 504", nos[i], got, err)
		}
	}
	applied := 0
	for _, no := range nos {
		applied += b.sim.Stats().Refunds[no].Executed
	}
	// With a fixed seed both branches of the coin are taken across 30 calls.
	if applied == 0 || applied == n {
		t.Errorf("%d of %d timed-out refunds applied; want some applied and some not", applied, n)
	}

	// A client that gives up earlier than the hang still gets an error, not a hang.
	b.sim.SetKnobs(Knobs{TimeoutRate: 1, TimeoutDelay: time.Minute})
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err := b.client.Refund(short, refundReq("R-to-short"))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("refund with a short deadline: %v, want deadline exceeded", err)
	}

	b.sim.SetTimeoutRate(0)
	for _, no := range nos {
		if _, err := b.client.Refund(ctx, refundReq(no)); err != nil {
			t.Fatal(err)
		}
	}
	st := b.sim.Stats()
	for _, no := range nos {
		if got := st.Refunds[no].Executed; got != 1 {
			t.Errorf("%s executed %d times after the retry, want 1", no, got)
		}
	}
	if st.MaxExecuted != 1 {
		t.Errorf("max_executed = %d, want 1", st.MaxExecuted)
	}
}

func TestDelayIsAdded(t *testing.T) {
	b := setup(t, Config{})
	b.sim.SetDelay(60 * time.Millisecond)
	start := time.Now()
	if _, err := b.client.Refund(context.Background(), refundReq("R-slow")); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 60*time.Millisecond {
		t.Errorf("refund took %v, want at least the 60ms delay", took)
	}
}

func TestReusedOutRequestNoWithOtherParamsIsRefused(t *testing.T) {
	b := setup(t, Config{})
	ctx := context.Background()
	if _, err := b.client.Refund(ctx, refundReq("R-reuse")); err != nil {
		t.Fatal(err)
	}
	other := refundReq("R-reuse")
	other.AmountCents++
	_, err := b.client.Refund(ctx, other)
	if got := statusOf(t, err); got != http.StatusConflict {
		t.Fatalf("status %d (%v), want 409", got, err)
	}
	if got := b.sim.Stats().Refunds["R-reuse"].Executed; got != 1 {
		t.Errorf("executed = %d, want 1", got)
	}
}

func TestBadRefundBody(t *testing.T) {
	b := setup(t, Config{})
	for _, req := range []RefundRequest{
		{TradeNo: "T", OrderNo: "O", AmountCents: 1},
		{OutRequestNo: "R", OrderNo: "O", AmountCents: 1},
		{OutRequestNo: "R", TradeNo: "T", OrderNo: "O"},
	} {
		_, err := b.client.Refund(context.Background(), req)
		if got := statusOf(t, err); got != http.StatusBadRequest {
			t.Errorf("%+v: status %d, want 400", req, got)
		}
	}
}

func TestPayForwardsSignedNotification(t *testing.T) {
	rc := newReceiver(t, nil)
	b := setup(t, Config{NotifyBaseURL: rc.srv.URL})
	ctx := context.Background()

	tradeNo, status, err := b.client.Pay(ctx, "O-pay", 1234, "")
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusOK {
		t.Errorf("status = %d, want orderflow's 200", status)
	}
	if !regexp.MustCompile(`^T[0-9a-f]{20}$`).MatchString(tradeNo) {
		t.Errorf("generated trade_no %q, want T + 20 hex digits", tradeNo)
	}
	got := rc.wait(paymentNotifyPath)
	if !got.SigValid {
		t.Error("notification signature invalid")
	}
	var n notification
	if err := json.Unmarshal(got.Body, &n); err != nil {
		t.Fatal(err)
	}
	if n.PaidAt.IsZero() || n.PaidAt.Location() != time.UTC {
		t.Errorf("paid_at = %v, want the simulator's time in UTC", n.PaidAt)
	}
	n.PaidAt = time.Time{}
	if diff := cmp.Diff(notification{OrderNo: "O-pay", TradeNo: tradeNo, AmountCents: 1234}, n); diff != "" {
		t.Errorf("notification (-want +got):\n%s", diff)
	}

	res, err := b.client.PayTimes(ctx, PayRequest{OrderNo: "O-dup", AmountCents: 50, TradeNo: "T-given", Times: 5})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{200, 200, 200, 200, 200}, res.StatusCodes); diff != "" {
		t.Errorf("status codes (-want +got):\n%s", diff)
	}
	if res.TradeNo != "T-given" || string(res.Body) != `{"result":"success"}` {
		t.Errorf("result = %+v, want the given trade_no and orderflow's body", res)
	}
	dups := rc.requests(paymentNotifyPath)[1:]
	if len(dups) != 5 {
		t.Fatalf("%d duplicate notifications arrived, want 5", len(dups))
	}
	for _, d := range dups {
		if !bytes.Equal(d.Body, dups[0].Body) || !d.SigValid {
			t.Errorf("duplicate differs or is badly signed: %s", d.Body)
		}
	}
	if st := b.sim.Stats(); st.PaymentsSent != 6 {
		t.Errorf("payments_sent = %d, want 6", st.PaymentsSent)
	}
}

func TestPayPassesOrderflowErrorsThrough(t *testing.T) {
	rc := newReceiver(t, func(string, int) int { return http.StatusNotFound })
	b := setup(t, Config{NotifyBaseURL: rc.srv.URL})
	_, status, err := b.client.Pay(context.Background(), "O-unknown", 1, "")
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusNotFound {
		t.Errorf("status = %d, want orderflow's 404", status)
	}
}

func TestPayUnreachableIs502(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // a port nobody listens on
	b := setup(t, Config{NotifyBaseURL: dead.URL})
	_, _, err := b.client.Pay(context.Background(), "O-x", 1, "")
	if got := statusOf(t, err); got != http.StatusBadGateway {
		t.Errorf("status %d (%v), want 502", got, err)
	}
}

func TestRefundCallbackSignedAndRetried(t *testing.T) {
	// orderflow is "restarting": the first two callbacks get 503.
	rc := newReceiver(t, func(path string, n int) int {
		if path == refundNotifyPath && n <= 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	b := setup(t, Config{NotifyBaseURL: rc.srv.URL, CallbackDelay: 20 * time.Millisecond})
	ctx := context.Background()

	got, err := b.client.Refund(ctx, refundReq("R-cb"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != StatusProcessing {
		t.Fatalf("status = %q, want processing", got.Status)
	}
	var last received
	for range 3 {
		last = rc.wait(refundNotifyPath)
	}
	if !last.SigValid {
		t.Error("callback signature invalid")
	}
	var cb RefundStatus
	if err := json.Unmarshal(last.Body, &cb); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(RefundStatus{OutRequestNo: "R-cb", Status: StatusSucceeded}, cb); diff != "" {
		t.Errorf("callback (-want +got):\n%s", diff)
	}
	q, err := b.client.QueryRefund(ctx, "R-cb")
	if err != nil || q.Status != StatusSucceeded {
		t.Errorf("query after callback = %+v, %v; want succeeded", q, err)
	}
	// The counter moves after the 2xx is read, so give it a moment.
	deadline := time.Now().Add(2 * time.Second)
	for b.sim.Stats().CallbacksSent != 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if st := b.sim.Stats(); st.CallbacksSent != 1 || st.CallbacksFailed != 0 {
		t.Errorf("callbacks sent/failed = %d/%d, want 1/0", st.CallbacksSent, st.CallbacksFailed)
	}
}

func TestFailRefund(t *testing.T) {
	ctx := context.Background()

	t.Run("armed before arrival", func(t *testing.T) {
		b := setup(t, Config{})
		if err := b.client.FailRefund(ctx, "R-armed"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.client.QueryRefund(ctx, "R-armed"); statusOf(t, err) != http.StatusNotFound {
			t.Errorf("an armed refund the provider never saw must query 404, got %v", err)
		}
		got, err := b.client.Refund(ctx, refundReq("R-armed"))
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != StatusFailed {
			t.Errorf("status = %q, want failed", got.Status)
		}
		if st := b.sim.Stats().Refunds["R-armed"]; st.Executed != 0 {
			t.Errorf("a declined refund executed %d times, want 0", st.Executed)
		}
	})

	t.Run("processing fails and calls back", func(t *testing.T) {
		rc := newReceiver(t, nil)
		b := setup(t, Config{NotifyBaseURL: rc.srv.URL, CallbackDelay: time.Hour})
		if _, err := b.client.Refund(ctx, refundReq("R-proc")); err != nil {
			t.Fatal(err)
		}
		if err := b.client.FailRefund(ctx, "R-proc"); err != nil {
			t.Fatal(err)
		}
		cb := rc.wait(refundNotifyPath)
		if !cb.SigValid || !bytes.Contains(cb.Body, []byte(`"status":"failed"`)) {
			t.Errorf("callback = %s (signed %v), want a signed failed callback", cb.Body, cb.SigValid)
		}
		q, err := b.client.QueryRefund(ctx, "R-proc")
		if err != nil || q.Status != StatusFailed {
			t.Errorf("query = %+v, %v; want failed", q, err)
		}
		again, err := b.client.Refund(ctx, refundReq("R-proc"))
		if err != nil || again.Status != StatusFailed {
			t.Errorf("repeat = %+v, %v; want the same failed refund", again, err)
		}
	})

	t.Run("succeeded cannot fail", func(t *testing.T) {
		b := setup(t, Config{})
		if _, err := b.client.Refund(ctx, refundReq("R-done")); err != nil {
			t.Fatal(err)
		}
		err := b.client.FailRefund(ctx, "R-done")
		if got := statusOf(t, err); got != http.StatusConflict {
			t.Errorf("status %d (%v), want 409", got, err)
		}
	})
}

func TestKnobsOverHTTP(t *testing.T) {
	b := setup(t, Config{})
	ctx := context.Background()
	want := Knobs{FailRate: 0.25, TimeoutRate: 0.5, Delay: 10 * time.Millisecond, TimeoutDelay: time.Second, CallbackDelay: 2 * time.Second}
	if err := b.client.SetKnobs(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := b.client.Knobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("knobs (-want +got):\n%s", diff)
	}

	// A partial update keeps the other fields.
	resp, err := http.Post(b.url+"/admin/config", "application/json", bytes.NewReader([]byte(`{"fail_rate":0}`)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want.FailRate = 0
	if diff := cmp.Diff(want, b.sim.Knobs()); diff != "" {
		t.Errorf("after partial update (-want +got):\n%s", diff)
	}

	resp, err = http.Post(b.url+"/admin/config", "application/json", bytes.NewReader([]byte(`{"fail_rate":2}`)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("fail_rate 2: status %d, want 400", resp.StatusCode)
	}
}
