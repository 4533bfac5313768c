// Package httperr is the HTTP face of a business error: which status each
// apperr.Kind answers with. The kinds are the domain's; the statuses are the
// API's, so the table lives here and the domain never imports net/http.
package httperr

import (
	"errors"
	"net/http"

	"orderflow/internal/domain/apperr"
)

var statusByKind = map[apperr.Kind]int{
	apperr.Invalid:       http.StatusBadRequest,
	apperr.Unauthorized:  http.StatusUnauthorized,
	apperr.Forbidden:     http.StatusForbidden,
	apperr.NotFound:      http.StatusNotFound,
	apperr.Conflict:      http.StatusConflict,
	apperr.Unprocessable: http.StatusUnprocessableEntity,
	apperr.TooMany:       http.StatusTooManyRequests,
	apperr.Unavailable:   http.StatusServiceUnavailable,
}

// Status is the status the API answers with for err: the business error's
// kind, or 500 for anything else.
func Status(err error) int {
	var e *apperr.Error
	if errors.As(err, &e) {
		return statusByKind[e.Kind]
	}
	return http.StatusInternalServerError
}
