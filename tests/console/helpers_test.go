package console

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"orderflow/internal/domain/refund"
	"orderflow/internal/infra/failpoint"
	"orderflow/internal/testenv"
	"orderflow/model"
)

// startStack is the whole system with a short activation budget, so a
// planted failure fails fast.
func startStack(t testing.TB) *testenv.Stack { return testenv.StartFailFast(t, testenv.Shared, "") }

// browser is a cookie-keeping HTTP client that does not follow redirects,
// so a test sees each answer as sent.
type browser struct {
	base string
	c    *http.Client
}

func newBrowser(t testing.TB, base string) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{base: base, c: &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: testenv.ContractTransport(nil),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type answer struct {
	status   int
	body     string
	location string
	header   http.Header
}

// do sends a request; form, when not nil, is the urlencoded body; headers
// are name, value pairs.
func (b *browser) do(t testing.TB, method, path string, form url.Values, headers ...string) answer {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: resp.StatusCode, body: string(raw), location: resp.Header.Get("Location"), header: resp.Header}
}

// login posts the admin token and fails the test unless a session starts.
func (b *browser) login(t testing.TB, token string) {
	t.Helper()
	a := b.do(t, "POST", "/console/login", url.Values{"token": {token}})
	if a.status != http.StatusSeeOther || a.location != "/console/" {
		t.Fatalf("login: status %d to %q, want 303 to /console/; body %.300s", a.status, a.location, a.body)
	}
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf reads the form token from a page the session can see.
func (b *browser) csrf(t testing.TB) string {
	t.Helper()
	a := b.do(t, "GET", "/console/", nil)
	m := csrfInput.FindStringSubmatch(a.body)
	if a.status != 200 || m == nil {
		t.Fatalf("no CSRF token on /console/ (status %d)", a.status)
	}
	return m[1]
}

// plantFailed makes a card order whose delivery fails every attempt
// until it is failed, then disarms the fault so a retry can finish it.
func plantFailed(t testing.TB, s *testenv.Stack, sku string) (orderNo string, codes []string) {
	t.Helper()
	pid := s.NewProduct(t, map[string]any{"sku": sku, "kind": "card", "price_cents": 700})
	codes = s.AddCards(t, pid, strings.ToUpper(sku), 1)
	_, buyer := s.NewUser(t, sku, 0)
	o := buyer.CreateOrder(t, pid, 1)
	s.PayUntilFailed(t, o, "", 30*time.Second)
	failpoint.Disable(failpoint.ActivateDeliver)
	return o.OrderNo, codes
}

// plantManual makes a late payment whose refund the provider declares
// failed: a refund in manual, waiting for an operator.
func plantManual(t testing.TB, s *testenv.Stack, sku string) (orderNo, refundNo string) {
	t.Helper()
	ctx := context.Background()
	pid := s.NewProduct(t, map[string]any{"sku": sku, "kind": "card", "price_cents": 650})
	s.AddCards(t, pid, strings.ToUpper(sku), 1)
	_, buyer := s.NewUser(t, sku, 0)
	o := buyer.CreateOrder(t, pid, 1)
	if st, raw, err := buyer.Send("POST", "/api/v1/orders/"+o.OrderNo+"/cancel", nil); err != nil || st != 200 {
		t.Fatalf("cancel %s: status %d %s %v", o.OrderNo, st, raw, err)
	}
	trade := "T" + strings.ToUpper(strings.ReplaceAll(sku, "-", ""))
	refundNo = refund.Number(o.OrderNo, trade)
	if err := s.Pay.FailRefund(ctx, refundNo); err != nil {
		t.Fatal(err)
	}
	if _, st, err := s.Pay.Pay(ctx, o.OrderNo, o.AmountCents, trade); err != nil || st != 200 {
		t.Fatalf("late pay %s: status %d, %v", o.OrderNo, st, err)
	}
	testenv.Eventually(t, 30*time.Second, "refund "+refundNo+" in manual", func() (bool, error) {
		r, err := s.SC.Store.RefundByNo(ctx, refundNo)
		if err != nil {
			return false, err
		}
		return r.Status == model.RefundManual, fmt.Errorf("refund %s is %s", refundNo, r.Status)
	})
	return o.OrderNo, refundNo
}

// notes counts an order's history notes whose reason contains text.
func notes(t testing.TB, s *testenv.Stack, orderNo, text string) int64 {
	t.Helper()
	return s.Count(t, `SELECT COUNT(*) FROM events WHERE object_type = 'order' AND object_no = ? AND from_status = to_status AND reason LIKE ?`,
		orderNo, model.NotePrefix+"%"+text+"%")
}
