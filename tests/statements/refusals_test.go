package statements

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/svc"
)

// viewerToken is a viewer's (ORDERFLOW_ADMIN_TOKENS): reads only.
const viewerToken = "statements-viewer-token-0001"

// The admin API refuses what it cannot do, and changes nothing: an unknown
// or disabled provider, a day that is not one or is not over, a break that
// does not exist or is resolved already, a viewer's action.
func TestRefusals(t *testing.T) {
	s := testenv.Start(t, testenv.Options{Configure: func(c *svc.Config) {
		c.AdminTokens = "vera:viewer:" + viewerToken
	}})
	waitCatchUp(t, s)
	a := &shop{s: s, p: fakeProvider{name: "paysim"}}
	viewer := &testenv.Client{Base: s.APIURL, Token: viewerToken}
	runs := func() int64 { return s.Count(t, "SELECT COUNT(*) FROM statement_runs") }
	before := runs()

	today := time.Now().UTC().Format(time.DateOnly)
	for _, tc := range []struct {
		name, provider, date, code string
	}{
		{"an unknown provider", "nosuch", "2026-01-01", "unknown_provider"},
		{"a provider not enabled", "stripe", "2026-01-01", "unknown_provider"},
		{"no provider", "", "2026-01-01", "unknown_provider"},
		{"today, not over", "paysim", today, "invalid_date"},
		{"tomorrow", "paysim", time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly), "invalid_date"},
		{"month 13", "paysim", "2026-13-01", "invalid_date"},
		{"February 30", "paysim", "2026-02-30", "invalid_date"},
		{"not a date", "paysim", "yesterday", "invalid_date"},
		{"no date", "paysim", "", "invalid_date"},
	} {
		var e apiError
		if st := s.Admin.Do(t, "POST", "/api/v1/admin/statements/runs", map[string]string{"provider": tc.provider, "date": tc.date}, &e); st != http.StatusBadRequest || e.Error.Code != tc.code {
			t.Errorf("%s (%q, %q): %d %q, want 400 %s", tc.name, tc.provider, tc.date, st, e.Error.Code, tc.code)
		}
	}
	var e apiError
	if st := viewer.Do(t, "POST", "/api/v1/admin/statements/runs", map[string]string{"provider": "paysim", "date": "2026-01-01"}, &e); st != http.StatusForbidden || e.Error.Code != "forbidden" {
		t.Errorf("a viewer's run: %d %q, want 403 forbidden", st, e.Error.Code)
	}
	if n := runs(); n != before {
		t.Errorf("%d runs after the refusals, want %d", n, before)
	}
	if st := s.Admin.Do(t, "GET", "/api/v1/admin/statements/runs/999999999", nil, &e); st != http.StatusNotFound {
		t.Errorf("an unknown run: %d, want 404", st)
	}
	if st := s.Admin.Do(t, "GET", "/api/v1/admin/statements/breaks?status=bogus", nil, &e); st != http.StatusBadRequest {
		t.Errorf("breaks of status bogus: %d, want 400", st)
	}

	// A break to resolve: a payment on the statement for no order of ours
	// (it cannot be applied, so it stays open). The day is outside the
	// daily job's reach.
	day := time.Now().UTC().AddDate(0, 0, -10).Format(time.DateOnly)
	if err := s.Sim.Synthesize(day, 1, "SYN"); err != nil {
		t.Fatal(err)
	}
	if v := a.waitRun(t, a.startRun(t, day)); v.Breaks["unknown_payment"] != 1 {
		t.Fatalf("the run listed %v, want one unknown_payment", v.Breaks)
	}
	bs := a.breaks(t)
	var id int64
	for _, b := range bs {
		if b.Date == day && b.Status == "open" {
			id = b.ID
		}
	}
	if id == 0 {
		t.Fatalf("no open break of %s: %+v", day, bs)
	}
	resolve := fmt.Sprintf("/api/v1/admin/statements/breaks/%d/resolve", id)
	note := map[string]string{"note": "no such order; returned at the provider"}

	if st := viewer.Do(t, "POST", resolve, note, &e); st != http.StatusForbidden || e.Error.Code != "forbidden" {
		t.Errorf("a viewer's resolve: %d %q, want 403 forbidden", st, e.Error.Code)
	}
	var seen struct {
		Breaks []breakView `json:"breaks"`
	}
	if st := viewer.Do(t, "GET", "/api/v1/admin/statements/breaks?status=open&provider=paysim", nil, &seen); st != 200 || len(seen.Breaks) != 1 || seen.Breaks[0].ID != id {
		t.Errorf("a viewer's read of the open breaks: %d %+v, want 200 with break %d", st, seen.Breaks, id)
	}
	if st := s.Admin.Do(t, "POST", "/api/v1/admin/statements/breaks/999999999/resolve", note, &e); st != http.StatusNotFound || e.Error.Code != "break_not_found" {
		t.Errorf("resolve of a missing break: %d %q, want 404 break_not_found", st, e.Error.Code)
	}
	var b breakView
	if st := s.Admin.Do(t, "POST", resolve, note, &b); st != http.StatusOK || b.Status != "resolved" || b.Note != note["note"] || b.ResolvedBy != "admin" {
		t.Errorf("resolve: %d %+v, want 200 resolved by admin with the note", st, b)
	}
	if st := s.Admin.Do(t, "POST", resolve, map[string]string{"note": "again"}, &e); st != http.StatusConflict || e.Error.Code != "break_resolved" {
		t.Errorf("resolve twice: %d %q, want 409 break_resolved", st, e.Error.Code)
	}
	if got := a.breaks(t); len(got) != len(bs) {
		t.Errorf("%d breaks after the resolves, want %d", len(got), len(bs))
	}
	for _, b := range a.breaks(t) {
		if b.ID == id && (b.Status != "resolved" || b.Note != note["note"]) {
			t.Errorf("break %d after a second resolve: %s %q, want resolved with the first note", id, b.Status, b.Note)
		}
	}
	if n := s.Count(t, "SELECT COUNT(*) FROM audit_entries WHERE action = 'statement_break_resolve' AND object = ?", fmt.Sprintf("break:%d", id)); n != 1 {
		t.Errorf("%d audit entries of the resolve, want 1", n)
	}
}
