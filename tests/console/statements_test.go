package console

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"orderflow/internal/domain/statement"
	"orderflow/internal/infra/failpoint"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"
)

// plantBreak records a done run of a provider's day long past (no
// scheduled run touches it) and one open amount_mismatch break of ref in
// it, as a run would list it.
func plantBreak(t testing.TB, s *testenv.Stack, day, ref string) (runID, breakID int64) {
	t.Helper()
	ctx, st := context.Background(), s.SC.Store
	provider := s.UC.Statements.Providers()[0]
	now := s.SC.Clock.Now()
	run := &model.StatementRun{Provider: provider, Day: day, CreatedAt: now}
	if fresh, err := st.InsertStatementRun(ctx, run); err != nil || !fresh {
		t.Fatalf("plant run %s %s: fresh %v, %v", provider, day, fresh, err)
	}
	if _, err := st.StartStatementRun(ctx, run.ID, now); err != nil {
		t.Fatal(err)
	}
	if _, err := st.FinishStatementRun(ctx, run.ID, model.StatementTotals{ProviderLines: 7, Matched: 6}, now); err != nil {
		t.Fatal(err)
	}
	theirs, ours := int64(500), int64(450)
	b := &model.StatementBreak{Provider: provider, Day: day, Kind: statement.BreakAmountMismatch, Ref: ref, TradeNo: ref,
		OrderNo: "O" + ref, ProviderAmountCents: &theirs, LedgerAmountCents: &ours, RunID: run.ID, CreatedAt: now,
		Action: "none: check the trade at the provider"}
	if err := st.InTx(ctx, func(tx *model.Store) error { _, err := tx.InsertStatementBreak(ctx, b); return err }); err != nil {
		t.Fatal(err)
	}
	got, err := st.StatementBreakByRef(ctx, provider, b.Kind, ref)
	if err != nil {
		t.Fatal(err)
	}
	return run.ID, got.ID
}

// An operator sees the planted run and its open break on the Statements
// page (and the break on "needs a hand"), resolves it with a note through
// its form — once, a second post says it is resolved already — and the
// break is resolved with the note and her name, audited; a viewer sees
// the page without a form and is refused both posts with 403.
func TestConsoleStatements(t *testing.T) {
	const viewer, operator = "statements-viewer-token-01", "statements-operator-token-01"
	s := testenv.Start(t, testenv.Options{Configure: func(c *svc.Config) {
		c.AdminTokens = "vera.v:viewer:" + viewer + ",olga:operator:" + operator
	}})
	t.Cleanup(failpoint.Reset)
	runID, id := plantBreak(t, s, "2020-01-02", "TSTMT1")
	ids := strconv.FormatInt(id, 10)
	resolvePath := "/console/statements/breaks/" + ids + "/resolve"

	vera := newBrowser(t, s.APIURL)
	vera.login(t, viewer)
	a := vera.do(t, "GET", "/console/statements", nil)
	if a.status != 200 || !strings.Contains(a.body, `id="break-`+ids+`"`) {
		t.Fatalf("statements as viewer: %d, break listed %v", a.status, strings.Contains(a.body, "break-"+ids))
	}
	if n := strings.Count(a.body, `<form method="post"`); n != 1 {
		t.Errorf("the viewer's Statements page shows %d post forms, want the log-out alone", n)
	}
	csrf := vera.csrf(t)
	for _, p := range []string{resolvePath, "/console/statements/runs"} {
		form := url.Values{"csrf": {csrf}, "note": {"viewer was here"}, "provider": {"paysim"}, "date": {"2020-01-03"}}
		if a := vera.do(t, "POST", p, form, "Origin", s.APIURL); a.status != http.StatusForbidden {
			t.Errorf("POST %s as viewer: %d, want 403", p, a.status)
		}
	}

	olga := newBrowser(t, s.APIURL)
	olga.login(t, operator)
	a = olga.do(t, "GET", "/console/statements", nil)
	for _, want := range []string{`id="break-` + ids + `"`, `action="` + resolvePath + `"`, "amount_mismatch", "TSTMT1", "5.00", "4.50",
		`<tr data-id="` + strconv.FormatInt(runID, 10) + `"`, `action="/console/statements/runs"`} {
		if !strings.Contains(a.body, want) {
			t.Errorf("the operator's Statements page lacks %q", want)
		}
	}
	if a := olga.do(t, "GET", "/console/", nil); !strings.Contains(a.body, `href="/console/statements#break-`+ids+`"`) {
		t.Errorf("needs a hand does not link break %d to the Statements page", id)
	}

	form := url.Values{"csrf": {olga.csrf(t)}, "note": {"provider fee corrected by hand"}}
	for i, want := range []string{"resolved by olga", "resolved already"} {
		a := olga.do(t, "POST", resolvePath, form, "Origin", s.APIURL)
		if a.status != http.StatusSeeOther || a.location != "/console/statements" {
			t.Fatalf("resolve %d: %d to %q", i, a.status, a.location)
		}
		if page := olga.do(t, "GET", "/console/statements", nil); !strings.Contains(page.body, want) {
			t.Errorf("after resolve %d the page's flash lacks %q", i, want)
		}
	}
	b, err := s.SC.Store.StatementBreakByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != model.BreakResolved || b.Note != "provider fee corrected by hand" || b.ResolvedBy != "olga" {
		t.Errorf("break after the resolve: %s by %q with %q, want resolved by olga with the note", b.Status, b.ResolvedBy, b.Note)
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM audit_entries WHERE object = ? AND actor = 'olga' AND action = 'statement_break_resolve'`,
		"break:"+ids); n != 1 {
		t.Errorf("%d audit entries of olga's resolve, want 1", n)
	}
	if a := olga.do(t, "GET", "/console/statements", nil); strings.Contains(a.body, `id="break-`+ids+`"`) {
		t.Errorf("the resolved break is still listed open")
	}

	// Run a day now: queued (or the day's run answered), named in the flash.
	form = url.Values{"csrf": {olga.csrf(t)}, "provider": {s.UC.Statements.Providers()[0]}, "date": {"2020-01-03"}}
	if a := olga.do(t, "POST", "/console/statements/runs", form, "Origin", s.APIURL); a.status != http.StatusSeeOther {
		t.Fatalf("run a day: %d", a.status)
	}
	if page := olga.do(t, "GET", "/console/statements", nil); !strings.Contains(page.body, "statement of 2020-01-03 is") {
		t.Errorf("the run's flash is missing")
	}
	form.Set("date", "2999-01-01")
	olga.do(t, "POST", "/console/statements/runs", form, "Origin", s.APIURL)
	if page := olga.do(t, "GET", "/console/statements", nil); !strings.Contains(page.body, "Nothing done to the") {
		t.Errorf("a day not over is not refused in the flash")
	}
}
