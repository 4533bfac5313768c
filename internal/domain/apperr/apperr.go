// Package apperr is the shape of a business error the API shows a client:
// a kind (which becomes the HTTP status), a stable code and a message.
package apperr

import (
	"errors"
	"net/http"
)

// Kind classifies an error for the client.
type Kind int

// Kinds of business error.
const (
	Invalid Kind = iota + 1
	Unauthorized
	Forbidden
	NotFound
	Conflict
	TooMany
	Unavailable
	// Unprocessable: well formed, but it contradicts what the server already
	// holds (an Idempotency-Key reused for another request).
	Unprocessable
)

var statusByKind = map[Kind]int{
	Invalid:       http.StatusBadRequest,
	Unauthorized:  http.StatusUnauthorized,
	Forbidden:     http.StatusForbidden,
	NotFound:      http.StatusNotFound,
	Conflict:      http.StatusConflict,
	Unprocessable: http.StatusUnprocessableEntity,
	TooMany:       http.StatusTooManyRequests,
	Unavailable:   http.StatusServiceUnavailable,
}

// Error is a business error with a code the client can act on.
type Error struct {
	Kind    Kind
	Code    string
	Message string
}

// New returns a business error.
func New(kind Kind, code, message string) *Error {
	return &Error{Kind: kind, Code: code, Message: message}
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// HTTPStatus is the status the API answers with for err: the business
// error's kind, or 500 for anything else.
func HTTPStatus(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return statusByKind[e.Kind]
	}
	return http.StatusInternalServerError
}
