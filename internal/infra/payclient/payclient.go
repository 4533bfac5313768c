// Package payclient is orderflow's client for the payment provider's refund
// protocol (SPEC "Payment provider"): every request signed with X-Signature.
package payclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"orderflow/internal/infra/tracing"
	"time"

	"orderflow/internal/infra/sign"
)

// Provider refund statuses.
const (
	StatusProcessing = "processing"
	StatusSucceeded  = "succeeded"
	StatusFailed     = "failed"
)

// Client calls the provider.
type Client struct {
	base   string
	secret string
	http   *http.Client
}

// New returns a client with a per-call timeout: a call that takes longer has
// an unknown outcome, and the caller must ask before sending again.
func New(baseURL, secret string, timeout time.Duration) *Client {
	return &Client{base: baseURL, secret: secret, http: &http.Client{Timeout: timeout, Transport: tracing.Transport(nil)}}
}

// RefundRequest asks the provider to return a trade's money.
type RefundRequest struct {
	OutRequestNo string `json:"out_request_no"`
	TradeNo      string `json:"trade_no"`
	OrderNo      string `json:"order_no"`
	AmountCents  int64  `json:"amount_cents"`
}

type statusBody struct {
	OutRequestNo string `json:"out_request_no"`
	Status       string `json:"status"`
}

// Refund sends a refund (idempotent per OutRequestNo at the provider) and
// returns the provider's status. Any error means "unknown — ask again".
func (c *Client) Refund(ctx context.Context, r RefundRequest) (string, error) {
	body, _ := json.Marshal(r)
	st, _, err := c.do(ctx, http.MethodPost, "/refunds", body)
	return st, err
}

// Query asks the provider about a refund; found is false when the provider
// never saw it (safe to send).
func (c *Client) Query(ctx context.Context, outRequestNo string) (status string, found bool, err error) {
	st, code, err := c.do(ctx, http.MethodGet, "/refunds/"+url.PathEscape(outRequestNo), nil)
	if code == http.StatusNotFound {
		return "", false, nil
	}
	return st, err == nil, err
}

func (c *Client) do(ctx context.Context, method, path string, body []byte) (string, int, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return "", 0, err
	}
	if body == nil {
		body = []byte{}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(sign.Header, sign.Sum(c.secret, body))
	resp, err := c.http.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("provider %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return "", resp.StatusCode, fmt.Errorf("provider %s %s: status %d: %.200s", method, path, resp.StatusCode, raw)
	}
	var sb statusBody
	if err := json.Unmarshal(raw, &sb); err != nil || sb.Status == "" {
		return "", resp.StatusCode, fmt.Errorf("provider %s %s: unreadable answer %.200q", method, path, raw)
	}
	return sb.Status, resp.StatusCode, nil
}
