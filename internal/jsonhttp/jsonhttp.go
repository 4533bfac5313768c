// Package jsonhttp is the one JSON-over-HTTP exchange the programs around
// orderflow share — the bench's and the dev-mode demo's calls to the API,
// the chaos suite's, the payment simulator's client and its notifications:
// a body encoded as JSON, a bearer token and further headers set, the answer
// read whole. Send hands back any answer; Call wants a 2xx and decodes it.
// What one caller adds (a signature over the body, a contract check in the
// transport, a reading of the error body) stays with that caller.
package jsonhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// maxAnswer bounds how much of an answer is read; every answer these
// programs read is a few kilobytes at most.
const maxAnswer = 1 << 20

// Client sends requests to one address.
type Client struct {
	// Base is put before every Request.Path ("" when the paths are whole URLs).
	Base string
	// HTTP sends the requests; nil means http.DefaultClient.
	HTTP *http.Client
}

// Request is one exchange.
type Request struct {
	Method, Path string
	// Bearer, when set, is sent as "Authorization: Bearer <Bearer>".
	Bearer string
	// Header holds further headers, such as a signature of the body.
	Header map[string]string
	// Body is encoded as JSON; a json.RawMessage is sent as it is (a body
	// already encoded, to be signed, say), and nil sends no body.
	Body any
}

// Answer is what came back.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// StatusError is an answer outside 2xx.
type StatusError struct {
	Method, Path string
	Status       int
	Body         string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Status, e.Body)
}

// Send sends r with Content-Type application/json and returns the answer
// whatever its status; an error means no whole answer (its status is kept
// when only reading the body failed).
func (c Client) Send(ctx context.Context, r Request) (Answer, error) {
	var body io.Reader
	switch b := r.Body.(type) {
	case nil:
	case json.RawMessage:
		body = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return Answer{}, fmt.Errorf("%s %s: encode: %w", r.Method, r.Path, err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, c.Base+r.Path, body)
	if err != nil {
		return Answer{}, fmt.Errorf("%s %s: %w", r.Method, r.Path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if r.Bearer != "" {
		req.Header.Set("Authorization", "Bearer "+r.Bearer)
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Answer{}, fmt.Errorf("%s %s: %w", r.Method, r.Path, err)
	}
	defer resp.Body.Close()
	a := Answer{Status: resp.StatusCode, Header: resp.Header}
	if a.Body, err = io.ReadAll(io.LimitReader(resp.Body, maxAnswer)); err != nil {
		return a, fmt.Errorf("%s %s: read answer: %w", r.Method, r.Path, err)
	}
	return a, nil
}

// Call sends r and decodes a 2xx answer into out (nil: discard it); any
// other status is a *StatusError.
func (c Client) Call(ctx context.Context, r Request, out any) error {
	a, err := c.Send(ctx, r)
	if err != nil {
		return err
	}
	if a.Status/100 != 2 {
		return &StatusError{Method: r.Method, Path: r.Path, Status: a.Status, Body: string(bytes.TrimSpace(a.Body))}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(a.Body, out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", r.Method, r.Path, err)
	}
	return nil
}
