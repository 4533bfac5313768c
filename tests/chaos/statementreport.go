package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"slices"
	"strings"

	"orderflow/model"
)

// The statement step's figures: read from the ledger, printed, described.

// dayFigures reads the provider's payments on the day and its breaks.
func (w *workload) dayFigures(ctx context.Context, db *sql.DB, d statementDay, s *DayStats) error {
	err := db.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(paid_at >= ? AND paid_at < ?), 0) FROM payments WHERE provider = ?`,
		d.from, d.to, d.provider).Scan(&s.Payments, &s.OnDay)
	if err != nil {
		return err
	}
	var list struct {
		Breaks []struct {
			Kind   string `json:"kind"`
			Status string `json:"status"`
		} `json:"breaks"`
	}
	if err := w.admin(ctx, "GET", "/api/v1/admin/statements/breaks?provider="+d.provider, nil, &list); err != nil {
		return err
	}
	s.Open, s.Resolved = map[string]int{}, map[string]int{}
	for _, b := range list.Breaks {
		if b.Status == string(model.BreakOpen) {
			s.Open[b.Kind]++
		} else {
			s.Resolved[b.Kind]++
		}
	}
	return nil
}

// print writes the step's figures.
func (s *StatementStats) print(w io.Writer) {
	fmt.Fprintf(w, "\nstatements (each provider's clock on the day before for the whole run; differences planted, then the day run twice):\n")
	for _, d := range s.Days {
		fmt.Fprintf(w, "  %s %s: ledger payments dated on the day %d of %d\n", d.Provider, d.Day, d.OnDay, d.Payments)
		for _, r := range d.Runs {
			fmt.Fprintf(w, "    %s\n", r)
		}
		fmt.Fprintf(w, "    breaks open: %s; resolved: %s\n", kv(d.Open), kv(d.Resolved))
	}
	planted := make([]string, len(s.Planted))
	for i, p := range s.Planted {
		planted[i] = p.String()
	}
	slices.Sort(planted)
	fmt.Fprintf(w, "  planted: %d\n", len(planted))
	for _, p := range planted {
		fmt.Fprintf(w, "    %s\n", p)
	}
	printFirst(w, "statement step findings", s.Findings)
}

// describe is a one-line summary for progress lines.
func (s *StatementStats) describe() string {
	var parts []string
	for _, d := range s.Days {
		for i, r := range d.Runs {
			parts = append(parts, fmt.Sprintf("%s run %d: %d lines, %d matched, breaks %s", d.Provider, i+1, r.ProviderLines, r.Matched, kv(r.Breaks)))
		}
	}
	return strings.Join(parts, "; ")
}
