package testenv

import (
	"strings"
	"testing"
	"time"

	"orderflow/internal/audit"
)

// CheckAudit runs the money audit over the stack's ledger and Redis and
// fails the test on any violation, naming what it ran after. It returns
// the report for the test's own checks.
func (s *Stack) CheckAudit(t testing.TB, after string) *audit.Report {
	t.Helper()
	db, err := audit.Open(s.Config.MySQLDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rep, err := audit.Run(t.Context(), audit.Options{DB: db, Redis: s.SC.Redis, Grace: time.Second, InFlightGrace: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() {
		var b strings.Builder
		rep.Print(&b)
		t.Errorf("audit after %s:\n%s", after, b.String())
	}
	return rep
}
