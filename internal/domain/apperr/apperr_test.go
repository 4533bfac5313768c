package apperr_test

import (
	"errors"
	"fmt"
	"testing"

	"orderflow/internal/domain/apperr"
)

func TestIsFinal(t *testing.T) {
	gone := apperr.New(apperr.NotFound, "order_not_found", "no such order")
	busy := apperr.New(apperr.Conflict, "invalid_status", "not now")
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"a plain error (a database outage, say)", errors.New("connection refused"), false},
		{"marked final", apperr.Final(errors.New("attempts exhausted")), true},
		{"marked final, then wrapped", fmt.Errorf("activate O1: %w", apperr.Final(errors.New("out of bounds"))), true},
		{"not found", gone, true},
		{"not found, wrapped", fmt.Errorf("close O1: %w", gone), true},
		{"another business kind", busy, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := apperr.IsFinal(tc.err); got != tc.want {
				t.Errorf("IsFinal(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
