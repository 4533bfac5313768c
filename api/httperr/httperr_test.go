package httperr_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"orderflow/api/httperr"
	"orderflow/internal/domain/apperr"
)

func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{apperr.New(apperr.Invalid, "x", "x"), http.StatusBadRequest},
		{apperr.New(apperr.Unauthorized, "x", "x"), http.StatusUnauthorized},
		{apperr.New(apperr.Forbidden, "x", "x"), http.StatusForbidden},
		{apperr.New(apperr.NotFound, "x", "x"), http.StatusNotFound},
		{apperr.New(apperr.Conflict, "x", "x"), http.StatusConflict},
		{apperr.New(apperr.TooMany, "x", "x"), http.StatusTooManyRequests},
		{apperr.New(apperr.Unavailable, "x", "x"), http.StatusServiceUnavailable},
		{apperr.New(apperr.Unprocessable, "x", "x"), http.StatusUnprocessableEntity},
		{fmt.Errorf("wrapped: %w", apperr.New(apperr.Unprocessable, "x", "x")), http.StatusUnprocessableEntity},
		{errors.New("broken"), http.StatusInternalServerError},
	} {
		if got := httperr.Status(tc.err); got != tc.want {
			t.Errorf("Status(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
