package worker

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"orderflow/internal/domain/apperr"

	"github.com/hibiken/asynq"
)

// TestSkipFinal holds the one mapping from a domain error to asynq's retry
// or skip: final (marked, or its object gone) is skipped, anything else —
// a database outage, a provider's timeout — is retried.
func TestSkipFinal(t *testing.T) {
	gone := apperr.New(apperr.NotFound, "order_not_found", "no such order")
	for _, tc := range []struct {
		name     string
		err      error
		wantSkip bool
	}{
		{"done", nil, false},
		{"the ledger down", errors.New("dial tcp: connection refused"), false},
		{"attempts spent", apperr.Final(errors.New("activate O1 (attempt 5): provider timeout")), true},
		{"object gone", fmt.Errorf("close O1: %w", gone), true},
		{"a conflict", apperr.New(apperr.Conflict, "invalid_status", "not now"), false},
		{"already a skip", fmt.Errorf("decode: %w", asynq.SkipRetry), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := skipFinal(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return tc.err }))
			err := h.ProcessTask(context.Background(), asynq.NewTask("order:close", nil))
			if got := errors.Is(err, asynq.SkipRetry); got != tc.wantSkip {
				t.Errorf("skip = %v, want %v (error %v)", got, tc.wantSkip, err)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("the handler's error %v is not kept in %v", tc.err, err)
			}
		})
	}
}
