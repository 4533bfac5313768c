package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// plantEach is how many breaks of each kind the statements bench plants.
const plantEach = 5

// statementPlan is one day of the statements bench: the simulator lists n
// synthetic payments S<9-digit seq> (paysim.Synthesize), and the ledger holds
// a finished order and its applied payment for each of them except the
// unknown ones, plus payments the statement does not list.
type statementPlan struct {
	day     string
	start   time.Time // the day's first instant, UTC
	n       int
	unknown []int // seqs the ledger never saw: unknown_payment, left open ("no order")
	altered []int // seqs the statement lists with another amount: amount_mismatch
	missing int   // ledger payments M<9-digit seq> of the day not on the statement: missing_payment
}

// newStatementPlan spreads the planted lines over the day's n lines.
func newStatementPlan(day time.Time, n int) statementPlan {
	p := statementPlan{day: day.Format(time.DateOnly), start: day, n: n, missing: plantEach}
	for k := range plantEach {
		p.unknown = append(p.unknown, (2*k+1)*n/(2*plantEach)+1)
		p.altered = append(p.altered, (2*k+1)*n/(2*plantEach)+2)
	}
	return p
}

// synthNo is the trade and order number of synthetic line seq.
func synthNo(seq int) string { return fmt.Sprintf("S%09d", seq) }

// synthAmount is what synthetic line seq is paid (paysim's synthetic rule).
func synthAmount(seq int) int64 { return int64(100 + seq%900) }

// loadLedger writes the plan's orders and payments by set-based SQL (a few
// seconds for 200,000) and ANALYZEs the tables.
func loadLedger(ctx context.Context, db *sql.DB, p statementPlan) error {
	var skip []string
	for _, s := range p.unknown {
		skip = append(skip, fmt.Sprint(s))
	}
	// A finished card order paid at the statement's time of its line, a
	// second apart over the day as the simulator spreads them.
	orders := func(prefix string, n int, where string) string {
		return fmt.Sprintf(`INSERT INTO orders (order_no, user_id, product_id, kind, quantity, amount_cents, status, trade_no,
			activate_gen, close_gen, attempts, created_at, updated_at, expire_at, paid_at, finished_at)
			SELECT x.no, 1, 1, 'card', 1, 100 + x.seq %% 900, 5, x.no, 1, 1, 1, x.t, x.t, x.t + INTERVAL 15 MINUTE, x.t, x.t
			FROM (SELECT s.seq, CONCAT('%s', LPAD(s.seq, 9, '0')) no, CAST(? AS DATETIME(3)) + INTERVAL s.seq %% 86400 SECOND t
			      FROM seq_0_to_%d s %s) x`, prefix, n-1, where)
	}
	stmts := []struct {
		what, sql string
	}{
		{"orders", orders("S", p.n, "WHERE s.seq NOT IN ("+strings.Join(skip, ",")+")")},
		{"orders the statement does not list", orders("M", p.missing, "")},
		{"payments", `INSERT INTO payments (provider, trade_no, order_id, amount_cents, disposition, created_at, paid_at)
			SELECT 'paysim', o.trade_no, o.id, o.amount_cents, 'applied', o.paid_at, o.paid_at FROM orders o`},
	}
	for _, st := range stmts {
		var args []any
		if strings.Contains(st.sql, "CAST(?") {
			args = append(args, p.start)
		}
		if _, err := db.ExecContext(ctx, st.sql, args...); err != nil {
			return fmt.Errorf("load %s: %w", st.what, err)
		}
	}
	if _, err := db.ExecContext(ctx, "ANALYZE TABLE orders, payments"); err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	return nil
}

// want is the breaks the plan must yield, by kind, and the lines matched.
func (p statementPlan) want() (breaks map[string]int64, matched int64) {
	return map[string]int64{"unknown_payment": int64(len(p.unknown)), "amount_mismatch": int64(len(p.altered)),
		"missing_payment": int64(p.missing)}, int64(p.n - len(p.unknown) - len(p.altered))
}
