// Package post is orderflow's one outbound HTTP delivery: a JSON body
// POSTed to a receiver that must answer 2xx — the shop's webhooks and the
// owner/admin notifications both go out through it.
package post

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
)

// drainLimit is how much of an answer is read (and dropped) so the
// connection can be reused; a receiver's body is never kept.
const drainLimit = 4 << 10

// Send POSTs body to url with Content-Type application/json and headers,
// and wants any 2xx.
func Send(ctx context.Context, client *http.Client, url string, body []byte, headers map[string]string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("receiver answered %d", resp.StatusCode)
	}
	return nil
}

// Func is Send with its client bound: what a package that must not import
// net/http (the domain) holds.
type Func func(ctx context.Context, url string, body []byte, headers map[string]string) error

// With binds Send to client.
func With(client *http.Client) Func {
	return func(ctx context.Context, url string, body []byte, headers map[string]string) error {
		return Send(ctx, client, url, body, headers)
	}
}
