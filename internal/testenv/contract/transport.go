package contract

import (
	"bytes"
	"errors"
	"io"
	"net/http"
)

// Transport is an http.RoundTripper that checks every exchange it carries
// against a Validator. A violation is returned as the call's error (so the
// caller fails where it stands) and handed to Report (so a caller that
// swallows errors, such as a goroutine retrying, still fails its test).
type Transport struct {
	// Base carries the exchange (http.DefaultTransport when nil).
	Base http.RoundTripper
	// Validator holds the document.
	Validator *Validator
	// Report, when set, receives every violation.
	Report func(*Violation)
}

// RoundTrip sends req, then checks the request and its answer.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	if IsExempt(req.URL.Path) {
		// Not checked, so not buffered: pprof profiles stream for seconds.
		return base.RoundTrip(req)
	}
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = b
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	respBody, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	if err := t.Validator.Check(req, reqBody, resp.StatusCode, resp.Header, respBody); err != nil {
		var v *Violation
		if errors.As(err, &v) && t.Report != nil {
			t.Report(v)
		}
		return nil, err
	}
	return resp, nil
}
