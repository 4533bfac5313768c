package testenv

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"orderflow/internal/infra/sign"
)

// Send sends body exactly as given (nil: no body) and returns the status and
// the raw answer. It never touches a testing.T, so goroutines may call it.
func (c *Client) Send(method, path string, body []byte, headers ...string) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, c.Base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// Raw is Send for the test goroutine: a transport error fails the test.
func (c *Client) Raw(t testing.TB, method, path string, body []byte, headers ...string) (int, []byte) {
	t.Helper()
	st, raw, err := c.Send(method, path, body, headers...)
	if err != nil {
		surfaced(err)
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return st, raw
}

// Notify POSTs a payment notification body straight to the API (not through
// the simulator) with the given X-Signature ("" sends none). Safe from goroutines.
func (s *Stack) Notify(body []byte, signature string) (int, []byte, error) {
	c := &Client{Base: s.APIURL}
	if signature == "" {
		return c.Send("POST", "/api/v1/payments/notify", body)
	}
	return c.Send("POST", "/api/v1/payments/notify", body, sign.Header, signature)
}

// Sign is the X-Signature of body under the stack's payment secret.
func (s *Stack) Sign(body []byte) string { return sign.Sum(s.Config.PaySecret, body) }
