package testenv

import (
	"testing"

	"orderflow/internal/infra/failpoint"
	"orderflow/svc"
)

// StartFailFast starts a stack on backend that gives an order's delivery
// two attempts, so a planted failure fails fast, with the named operators
// of adminTokens (ORDERFLOW_ADMIN_TOKENS, "" for none); the test process's
// failpoints are reset when the test ends.
func StartFailFast(t testing.TB, backend Backend, adminTokens string) *Stack {
	t.Helper()
	s := Start(t, Options{Backend: backend, Configure: func(c *svc.Config) {
		c.MaxAttempts = 2
		if adminTokens != "" {
			c.AdminTokens = adminTokens
		}
	}})
	t.Cleanup(failpoint.Reset)
	return s
}
