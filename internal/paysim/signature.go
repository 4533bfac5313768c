package paysim

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"orderflow/internal/infra/sign"
	"orderflow/internal/jsonhttp"
)

// maxBody bounds what the simulator reads from any request; provider and
// harness bodies are a few hundred bytes.
const maxBody = 1 << 20

// signedHandler is a provider-route handler that receives the verified raw body.
type signedHandler func(w http.ResponseWriter, r *http.Request, body []byte)

// signed rejects requests whose X-Signature is missing or is not the HMAC of
// the raw body under the shared secret (GET requests sign the empty body),
// the way the real provider would.
func (s *Sim) signed(h signedHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		sig := r.Header.Get(sign.Header)
		if sig == "" {
			writeError(w, http.StatusUnauthorized, "missing_signature", "header "+sign.Header+" is required")
			return
		}
		if !sign.Valid(s.secret, body, sig) {
			s.log.Info("paysim: rejected request with a bad signature")
			writeError(w, http.StatusUnauthorized, "bad_signature", "header "+sign.Header+" does not match the body")
			return
		}
		h(w, r, body)
	})
}

// writeSignedJSON answers status with v as JSON and signs the body the way
// the simulator signs its callbacks, so orderflow can trust what it reads.
func (s *Sim) writeSignedJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only our own response types reach here, so this is a programming error.
		writeError(w, http.StatusInternalServerError, "internal", "encode response")
		return
	}
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set(sign.Header, sign.Sum(s.secret, b))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// readBody reads the whole request body, answering 400 or 413 itself on failure.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", err.Error())
		} else {
			writeError(w, http.StatusBadRequest, "bad_body", "read body: "+err.Error())
		}
		return nil, false
	}
	return body, true
}

// postSigned POSTs body to url with its signature and returns orderflow's
// status and response body.
func postSigned(ctx context.Context, c *http.Client, secret, url string, body []byte) (int, []byte, error) {
	a, err := jsonhttp.Client{HTTP: c}.Send(ctx, jsonhttp.Request{Method: http.MethodPost, Path: url,
		Header: map[string]string{sign.Header: sign.Sum(secret, body)}, Body: json.RawMessage(body)})
	return a.Status, a.Body, err
}
