// Package payfake is what the provider fakes (alipay, wechat, stripe below
// it) share: a signed notification a test can send, spoil and send again,
// the background deliveries that retry it as a provider does, and the hold
// that keeps an answer from ever coming until the fake closes; the knobs
// that spoil a statement (statement_knobs.go, the simulator's too); the
// read-outs a test takes of what a fake recorded (readouts.go); fresh keys
// (keys.go).
package payfake

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// Notification is one signed notification (a webhook), ready to POST (or
// to spoil).
type Notification struct {
	URL    string
	Header http.Header
	Body   []byte
}

// Spoiled is a copy of n whose body had insert written after the first
// marker once signed, which the signature no longer covers.
func (n *Notification) Spoiled(marker, insert string) *Notification {
	c := *n
	c.Body = bytes.Replace(n.Body, []byte(marker), []byte(marker+insert), 1)
	return &c
}

// Send POSTs the notification and returns the HTTP status.
func (n *Notification) Send(ctx context.Context) (int, error) {
	if n.URL == "" {
		return 0, errors.New("payfake: the notification has no URL to go to")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.URL, bytes.NewReader(n.Body))
	if err != nil {
		return 0, err
	}
	req.Header = n.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// SendUnless is Send, or nothing when dropped (a switch that loses the
// notification, as a provider can): the HTTP status, 0 when dropped.
func (n *Notification) SendUnless(ctx context.Context, dropped bool) (int, error) {
	if dropped {
		return 0, nil
	}
	return n.Send(ctx)
}

// Deliveries are a fake's notifications in flight and its held answers.
// The zero value is not ready: use NewDeliveries.
type Deliveries struct {
	hold chan struct{} // closed by Close: releases held answers
	wg   sync.WaitGroup
}

// NewDeliveries returns deliveries ready to use.
func NewDeliveries() *Deliveries { return &Deliveries{hold: make(chan struct{})} }

// Go delivers n in the background, retrying a few times on a non-2xx
// answer as the providers do (on a much shorter schedule).
func (d *Deliveries) Go(n *Notification) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		for attempt := 0; attempt < 5; attempt++ {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			status, err := n.Send(ctx)
			cancel()
			if err == nil && status/100 == 2 {
				return
			}
			select {
			case <-d.hold:
				return
			case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
			}
		}
	}()
}

// Hold keeps the request's answer from coming until its caller gives up
// or the fake closes (a call that times out after the work was done).
func (d *Deliveries) Hold(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-d.hold:
	}
}

// Close releases the held answers, stops the fake's server and waits for
// the deliveries in flight.
func (d *Deliveries) Close(srv *httptest.Server) {
	close(d.hold)
	srv.Close()
	d.wg.Wait()
}

// RandHex is n random bytes in hex: the fakes' ids, secrets and nonces.
func RandHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
