package handler

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"orderflow/apperr"

	"go.uber.org/zap"
)

// errBadJSON is a body that is not the JSON the endpoint takes.
var errBadJSON = apperr.New(apperr.Invalid, "invalid_json", "request body is not valid JSON for this endpoint")

const maxBody = 4 << 20

// decode reads a JSON body into dst; a bad body is a 400, never a 500.
func decode(r *http.Request, dst any) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		return apperr.New(apperr.Invalid, "body_too_large", "request body is too large or unreadable")
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return errBadJSON
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// writeError maps an error to {"error":{code,message}}: a business error
// keeps its code; anything else is logged and shown as a bare 500.
func writeError(w http.ResponseWriter, r *http.Request, log *zap.Logger, err error) {
	var body errorBody
	status := apperr.HTTPStatus(err)
	var ae *apperr.Error
	if errors.As(err, &ae) {
		body.Error.Code, body.Error.Message = ae.Code, ae.Message
	} else {
		log.Error("request failed", zap.String("method", r.Method), zap.String("path", r.URL.Path), zap.Error(err))
		body.Error.Code, body.Error.Message = "internal", "internal error; it has been logged"
	}
	writeJSON(w, status, body)
}
