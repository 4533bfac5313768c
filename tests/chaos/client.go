package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"orderflow/api/openapi"
	"orderflow/internal/jsonhttp"
	"orderflow/internal/testenv/contract"
)

// errFinal is an answer no retry can change (a 4xx).
var errFinal = errors.New("final answer")

// answer is one HTTP exchange's outcome.
type answer struct {
	status int
	body   []byte
}

// transient reports whether the exchange should simply be tried again: no
// answer at all, or a 5xx (the database or Redis is down, a proxy said 502).
func (a answer) transient(err error) bool {
	return err != nil || a.status >= 500
}

// httpClient sends JSON requests with a per-request timeout. Its exchanges
// with the API are checked against the OpenAPI document; the simulator's
// endpoints are not the API's, so they go unchecked.
type httpClient struct {
	http, api *http.Client
	apiURLs   []string

	mu     sync.Mutex
	broken []string // the exchanges that broke the document
}

func newHTTPClient(apiURLs []string) (*httpClient, error) {
	v, err := contract.New(openapi.Document)
	if err != nil {
		return nil, err
	}
	base := &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 10 * time.Second}
	c := &httpClient{http: &http.Client{Timeout: 6 * time.Second, Transport: base}, apiURLs: apiURLs}
	c.api = &http.Client{Timeout: 6 * time.Second, Transport: &contract.Transport{Base: base, Validator: v, Report: c.report}}
	return c, nil
}

func (c *httpClient) report(v *contract.Violation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.broken = append(c.broken, v.Error())
}

// contractViolations lists the API's answers (and accepted requests) that
// broke the OpenAPI document: each fails the run.
func (c *httpClient) contractViolations() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.broken)
}

// do sends body as JSON to url with the bearer token and header pairs
// (name, value, …) and returns the answer whatever its status.
func (c *httpClient) do(ctx context.Context, method, url, token string, body any, headers ...string) (answer, error) {
	r := jsonhttp.Request{Method: method, Path: url, Bearer: token, Body: body}
	if len(headers) > 1 {
		r.Header = map[string]string{}
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header[headers[i]] = headers[i+1]
	}
	client := c.http
	for _, api := range c.apiURLs {
		if strings.HasPrefix(url, api+"/") {
			client = c.api
		}
	}
	a, err := jsonhttp.Client{HTTP: client}.Send(ctx, r)
	return answer{status: a.Status, body: a.Body}, err
}

// retry calls f until it reports done, returns a final error, or the budget
// is spent; transient failures back off from 100 ms to 1 s.
func retry(ctx context.Context, budget time.Duration, f func() (done bool, err error)) error {
	deadline := time.Now().Add(budget)
	wait := 100 * time.Millisecond
	var last error
	for {
		done, err := f()
		if done {
			return nil
		}
		if errors.Is(err, errFinal) {
			return err
		}
		last = err
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up after %s: %w", budget, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, time.Second)
	}
}

func decodeInto(a answer, v any) error {
	if err := json.Unmarshal(a.body, v); err != nil {
		return fmt.Errorf("decode %q: %w", a.body, err)
	}
	return nil
}

func finalf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errFinal, fmt.Sprintf(format, args...))
}
