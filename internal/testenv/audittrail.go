package testenv

import (
	"testing"
	"time"
)

// AuditEntry is one entry of GET /api/v1/admin/audit.
type AuditEntry struct {
	At     time.Time      `json:"at"`
	Actor  string         `json:"actor"`
	Action string         `json:"action"`
	Object string         `json:"object"`
	Detail map[string]any `json:"detail"`
}

// AuditTrail reads the audit entries on object (an order's or a refund's
// number, "product:<id>") as the client's bearer, failing the test unless
// 200.
func (c *Client) AuditTrail(t testing.TB, object string) []AuditEntry {
	t.Helper()
	var out struct{ Entries []AuditEntry }
	if st := c.Do(t, "GET", "/api/v1/admin/audit?object="+object, nil, &out); st != 200 {
		t.Fatalf("audit of %s: status %d", object, st)
	}
	return out.Entries
}
