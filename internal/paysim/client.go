package paysim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"orderflow/internal/infra/sign"
	"orderflow/internal/jsonhttp"
)

// Client drives a running simulator: the test harness's admin calls, plus
// signed provider-protocol calls for testing the simulator itself. It is not
// orderflow's provider client, which lives with the refund code.
type Client struct {
	// BaseURL is the simulator's address, e.g. http://127.0.0.1:8090.
	BaseURL string
	// Secret signs provider-protocol calls (Refund, QueryRefund); admin calls
	// are unsigned.
	Secret string
	// HTTP sends the requests; nil means a client with a 30 s timeout (long
	// enough for a burst of notifications or an injected timeout).
	HTTP *http.Client
}

// HTTPError is a non-2xx answer from the simulator.
type HTTPError struct {
	Method, Path string
	StatusCode   int
	Code         string // the error code of the JSON error body, if any
	Message      string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("paysim %s %s: %d %s: %s", e.Method, e.Path, e.StatusCode, e.Code, e.Message)
}

var defaultHTTP = &http.Client{Timeout: 30 * time.Second}

// Pay makes the simulator notify orderflow that orderNo was paid. An empty
// tradeNo lets the simulator generate one. It returns the trade number used
// and orderflow's status code; err is set when the simulator could not reach
// orderflow or refused the call.
func (c *Client) Pay(ctx context.Context, orderNo string, amountCents int64, tradeNo string) (string, int, error) {
	res, err := c.PayTimes(ctx, PayRequest{OrderNo: orderNo, AmountCents: amountCents, TradeNo: tradeNo})
	if err != nil {
		return "", 0, err
	}
	return res.TradeNo, res.StatusCode, nil
}

// PayTimes sends req (set Times for a concurrent duplicate burst) and returns
// every status code orderflow answered.
func (c *Client) PayTimes(ctx context.Context, req PayRequest) (PayResult, error) {
	var res PayResult
	err := c.do(ctx, http.MethodPost, "/admin/pay", req, false, &res)
	return res, err
}

// Stats returns the simulator's counters.
func (c *Client) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	err := c.do(ctx, http.MethodGet, "/admin/stats", nil, false, &st)
	return st, err
}

// FailRefund declares the refund failed (or arms it to fail on arrival).
// Failing a refund that already succeeded is an *HTTPError with status 409.
func (c *Client) FailRefund(ctx context.Context, outRequestNo string) error {
	return c.do(ctx, http.MethodPost, "/admin/refunds/"+url.PathEscape(outRequestNo)+"/fail", nil, false, nil)
}

// Knobs returns the simulator's current fault-injection settings.
func (c *Client) Knobs(ctx context.Context) (Knobs, error) {
	var w knobsWire
	if err := c.do(ctx, http.MethodGet, "/admin/config", nil, false, &w); err != nil {
		return Knobs{}, err
	}
	return w.apply(Knobs{}), nil
}

// SetKnobs replaces the simulator's fault-injection settings; a zero
// TimeoutDelay means DefaultTimeoutDelay.
func (c *Client) SetKnobs(ctx context.Context, k Knobs) error {
	return c.do(ctx, http.MethodPost, "/admin/config", k.wire(), false, nil)
}

// Refund sends a signed POST /refunds.
func (c *Client) Refund(ctx context.Context, req RefundRequest) (RefundStatus, error) {
	var st RefundStatus
	err := c.do(ctx, http.MethodPost, "/refunds", req, true, &st)
	return st, err
}

// QueryRefund sends a signed GET /refunds/{out_request_no}; an unknown
// refund is an *HTTPError with status 404.
func (c *Client) QueryRefund(ctx context.Context, outRequestNo string) (RefundStatus, error) {
	var st RefundStatus
	err := c.do(ctx, http.MethodGet, "/refunds/"+url.PathEscape(outRequestNo), nil, true, &st)
	return st, err
}

// do sends in as JSON (nil: no body), signs it when signed, and decodes a
// 2xx answer into out (nil: discard).
func (c *Client) do(ctx context.Context, method, path string, in any, signed bool, out any) error {
	raw, _, err := c.send(ctx, method, path, in, signed)
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("paysim %s %s: decode answer: %w", method, path, err)
	}
	return nil
}

// send sends in as JSON (nil: no body), signs it when signed, and returns a
// 2xx answer's raw body and headers; any other status is an *HTTPError.
func (c *Client) send(ctx context.Context, method, path string, in any, signed bool) ([]byte, http.Header, error) {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return nil, nil, fmt.Errorf("paysim %s %s: encode: %w", method, path, err)
		}
	}
	r := jsonhttp.Request{Method: method, Path: path}
	if in != nil {
		r.Body = json.RawMessage(body)
	}
	if signed {
		r.Header = map[string]string{sign.Header: sign.Sum(c.Secret, body)}
	}
	hc := c.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	a, err := jsonhttp.Client{Base: strings.TrimRight(c.BaseURL, "/"), HTTP: hc}.Send(ctx, r)
	if err != nil {
		return nil, nil, fmt.Errorf("paysim %w", err)
	}
	if a.Status/100 != 2 {
		e := &HTTPError{Method: method, Path: path, StatusCode: a.Status}
		var eb errorBody
		if json.Unmarshal(a.Body, &eb) == nil && eb.Error.Code != "" {
			e.Code, e.Message = eb.Error.Code, eb.Error.Message
		} else {
			e.Message = string(a.Body)
		}
		return nil, nil, e
	}
	return a.Body, a.Header, nil
}
