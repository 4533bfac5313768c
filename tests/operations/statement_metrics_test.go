package operations

import (
	"context"
	"math"
	"testing"
	"time"

	"orderflow/internal/domain/statement"
	"orderflow/internal/testenv"
	"orderflow/model"
)

// The statement gauges on /metrics and the admin stats: before any run an
// enabled provider's last good run is +Inf (so the alert fires) and every
// break series is 0; after a good run and two breaks (one open since 30
// hours, one resolved) they say so. No worker: its start-up catch-up
// would run the statements (the worker's /metrics reads the same Sources,
// svc.MetricsSources).
func TestStatementMetricsAndStats(t *testing.T) {
	s := testenv.Start(t, testenv.Options{NoWorker: true})
	ctx := context.Background()
	providers := s.UC.Statements.Providers()
	if len(providers) == 0 {
		t.Fatal("no enabled provider publishes a statement")
	}
	p := providers[0]
	apiURL := s.APIURL + "/metrics"

	m := scrape(t, apiURL)
	if v, ok := value(m, "orderflow_statement_last_good_run_age_seconds", "provider", p); !ok || !math.IsInf(v, 1) {
		t.Errorf("before any run: last good run age of %s = %v (%v), want +Inf", p, v, ok)
	}
	for _, kind := range statement.BreakKinds {
		wantMetric(t, "api", m, 0, "orderflow_statement_breaks", "provider", p, "kind", kind, "status", "open")
	}
	wantMetric(t, "api", m, 0, "orderflow_statement_oldest_open_break_age_seconds", "provider", p)

	now := s.SC.Clock.Now()
	run := &model.StatementRun{Provider: p, Day: now.AddDate(0, 0, -1).Format(time.DateOnly), CreatedAt: now.Add(-2 * time.Hour)}
	if _, err := s.SC.Store.InsertStatementRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SC.Store.StartStatementRun(ctx, run.ID, now.Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SC.Store.FinishStatementRun(ctx, run.ID, model.StatementTotals{}, now.Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	amount := int64(500)
	for i, b := range []*model.StatementBreak{
		{Kind: statement.BreakAmountMismatch, Ref: "TMETRICS1", CreatedAt: now.Add(-30 * time.Hour)},
		{Kind: statement.BreakMissingPayment, Ref: "TMETRICS2", CreatedAt: now.Add(-time.Hour)},
	} {
		b.Provider, b.Day, b.TradeNo, b.LedgerAmountCents, b.RunID = p, run.Day, b.Ref, &amount, run.ID
		if err := s.SC.Store.InTx(ctx, func(tx *model.Store) error { _, err := tx.InsertStatementBreak(ctx, b); return err }); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			got, err := s.SC.Store.StatementBreakByRef(ctx, p, b.Kind, b.Ref)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.SC.Store.ResolveStatementBreak(ctx, got.ID, model.BreakResolution{By: "test", Note: "seen", At: now}); err != nil {
				t.Fatal(err)
			}
		}
	}

	{
		where, m := "api", scrape(t, apiURL)
		wantMetric(t, where, m, 1, "orderflow_statement_breaks", "provider", p, "kind", statement.BreakAmountMismatch, "status", "open")
		wantMetric(t, where, m, 1, "orderflow_statement_breaks", "provider", p, "kind", statement.BreakMissingPayment, "status", "resolved")
		wantMetric(t, where, m, 0, "orderflow_statement_breaks", "provider", p, "kind", statement.BreakMissingPayment, "status", "open")
		if v, _ := value(m, "orderflow_statement_last_good_run_age_seconds", "provider", p); v < 2*3600 || v > 3*3600 {
			t.Errorf("%s: last good run age = %v, want about 2 h", where, v)
		}
		if v, _ := value(m, "orderflow_statement_oldest_open_break_age_seconds", "provider", p); v < 30*3600 || v > 31*3600 {
			t.Errorf("%s: oldest open break age = %v, want about 30 h", where, v)
		}
	}

	var st struct {
		Open   int64            `json:"statement_breaks_open"`
		ByKind map[string]int64 `json:"statement_breaks_open_by_kind"`
	}
	if code := s.Admin.Do(t, "GET", "/api/v1/admin/stats", nil, &st); code != 200 {
		t.Fatalf("admin stats: status %d", code)
	}
	if st.Open != 1 || st.ByKind[statement.BreakAmountMismatch] != 1 || st.ByKind[statement.BreakMissingPayment] != 0 || len(st.ByKind) != len(statement.BreakKinds) {
		t.Errorf("admin stats: statement_breaks_open = %d, by kind %v; want 1, amount_mismatch 1 and every kind listed", st.Open, st.ByKind)
	}
}
