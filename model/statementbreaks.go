package model

import (
	"context"
	"time"
)

// StatementBreak is one difference between the ledger and a provider's
// statement, listed once per (provider, kind, ref).
type StatementBreak struct {
	ID                  int64
	Provider            string
	Day                 string
	Kind                string // the domain's Break* kinds
	Ref                 string // the trade number of a payment; the refund's or dispute's id otherwise
	TradeNo             string
	OrderNo             string
	RefundNo            string
	ProviderAmountCents *int64
	LedgerAmountCents   *int64
	Status              BreakStatus
	Action              string // what the system did about it
	Note                string // the operator's words when they resolved it
	ResolvedBy          string // the operator's name, or "system"
	RunID               int64
	CreatedAt           time.Time
	ResolvedAt          *time.Time
}

// InsertStatementBreak records a break once per (provider, kind, ref) and
// reports false when it is already listed (a re-run of its day). A new one
// sends the shop webhook statement.break in the caller's transaction.
func (s *Store) InsertStatementBreak(ctx context.Context, b *StatementBreak) (bool, error) {
	fresh, err := s.insertIgnoringDuplicate(ctx,
		`INSERT INTO statement_breaks (provider, day, kind, ref, trade_no, order_no, refund_no, provider_amount_cents, ledger_amount_cents,
		 status, action, run_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		b.Provider, b.Day, b.Kind, b.Ref, b.TradeNo, b.OrderNo, b.RefundNo, b.ProviderAmountCents, b.LedgerAmountCents,
		BreakOpen, clip(b.Action, 255), b.RunID, b.CreatedAt)
	if err != nil || !fresh {
		return false, err
	}
	return true, s.webhookForNewLater(ctx, "statement_break", BreakOpen.String(), b.CreatedAt, map[string]any{
		"provider": b.Provider, "date": b.Day, "kind": b.Kind, "trade_no": b.TradeNo, "order_no": b.OrderNo,
		"refund_no": b.RefundNo, "provider_amount_cents": b.ProviderAmountCents, "ledger_amount_cents": b.LedgerAmountCents,
	})
}

// StatementBreakByID loads one break.
func (s *Store) StatementBreakByID(ctx context.Context, id int64) (*StatementBreak, error) {
	return rowOf[StatementBreak](ctx, s, `SELECT * FROM statement_breaks WHERE id = ?`, id)
}

// StatementBreakByRef loads the break of one (provider, kind, ref).
func (s *Store) StatementBreakByRef(ctx context.Context, provider, kind, ref string) (*StatementBreak, error) {
	return rowOf[StatementBreak](ctx, s, `SELECT * FROM statement_breaks WHERE provider = ? AND kind = ? AND ref = ?`, provider, kind, ref)
}

// BreakResolution is how a break was resolved and by whom.
type BreakResolution struct {
	By     string // an operator's name, or "system"
	Note   string
	Action string // replaces the break's action when set
	At     time.Time
}

// ResolveStatementBreak moves an open break to resolved; false when it
// was resolved already.
func (s *Store) ResolveStatementBreak(ctx context.Context, id int64, r BreakResolution) (bool, error) {
	if err := BreakMachine.Check("break", BreakOpen, BreakResolved); err != nil {
		return false, err
	}
	q := `UPDATE statement_breaks SET status = ?, resolved_by = ?, note = ?, resolved_at = ?`
	args := []any{BreakResolved, clip(r.By, 64), clip(r.Note, 512), r.At}
	if r.Action != "" {
		q += `, action = ?`
		args = append(args, clip(r.Action, 255))
	}
	n, err := s.exec(ctx, q+` WHERE id = ? AND status = ?`, append(args, id, BreakOpen)...)
	return n == 1, err
}

// SetBreakAction records what the system did about an open break.
func (s *Store) SetBreakAction(ctx context.Context, id int64, action string) error {
	_, err := s.exec(ctx, `UPDATE statement_breaks SET action = ? WHERE id = ? AND status = ?`, clip(action, 255), id, BreakOpen)
	return err
}

// StatementBreaks lists breaks in a status (all when empty) of a provider
// (all when empty), oldest first.
func (s *Store) StatementBreaks(ctx context.Context, status BreakStatus, provider string, limit int) ([]StatementBreak, error) {
	q, args := `SELECT * FROM statement_breaks WHERE 1 = 1`, []any{}
	if status != "" {
		q, args = q+` AND status = ?`, append(args, status)
	}
	if provider != "" {
		q, args = q+` AND provider = ?`, append(args, provider)
	}
	return rowsOf[StatementBreak](ctx, s, q+` ORDER BY id LIMIT ?`, append(args, limit)...)
}

// OpenBreaksOf lists a provider's open breaks of one kind after id, in id
// order: the run's pass over the breaks the ledger may now hold.
func (s *Store) OpenBreaksOf(ctx context.Context, provider, kind string, afterID int64, limit int) ([]StatementBreak, error) {
	return rowsOf[StatementBreak](ctx, s, `SELECT * FROM statement_breaks WHERE provider = ? AND kind = ? AND status = ? AND id > ? ORDER BY id LIMIT ?`,
		provider, kind, BreakOpen, afterID, limit)
}

// BreakCount is the number of breaks of one provider, kind and status.
type BreakCount struct {
	Provider string
	Kind     string
	Status   BreakStatus
	N        int64
	// Oldest is when the oldest of them was listed.
	Oldest time.Time
}

// StatementBreakCounts counts every break by provider, kind and status.
func (s *Store) StatementBreakCounts(ctx context.Context) ([]BreakCount, error) {
	return rowsOf[BreakCount](ctx, s, `SELECT provider, kind, status, COUNT(*) AS n, MIN(created_at) AS oldest FROM statement_breaks
		GROUP BY provider, kind, status ORDER BY provider, kind, status`)
}

// RunBreakCounts counts the breaks a run listed first, by kind.
func (s *Store) RunBreakCounts(ctx context.Context, runID int64) (map[string]int64, error) {
	return countsBy[string](ctx, s, `SELECT kind AS counted, COUNT(*) AS n FROM statement_breaks WHERE run_id = ? GROUP BY kind`, runID)
}
