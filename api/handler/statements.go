package handler

import (
	"net/http"
	"time"

	"orderflow/internal/domain/statement"
)

// StatementRunView is a statement run as the admin API shows it (GET
// /api/v1/admin/statements/runs/{run_id}); the statement suite reads it too.
type StatementRunView struct {
	RunID         int64               `json:"run_id"`
	Provider      string              `json:"provider"`
	Date          string              `json:"date"`
	Status        statement.RunStatus `json:"status"`
	StartedAt     *time.Time          `json:"started_at"`
	FinishedAt    *time.Time          `json:"finished_at"`
	ProviderLines int64               `json:"provider_lines"`
	Matched       int64               `json:"matched"`
	Breaks        map[string]int64    `json:"breaks"`
	Totals        StatementRunTotals  `json:"totals"`
	Error         string              `json:"error"`
}

// StatementRunTotals are the statement's own totals of the day.
type StatementRunTotals struct {
	Payments      int64 `json:"payments"`
	GrossCents    int64 `json:"gross_cents"`
	Refunds       int64 `json:"refunds"`
	RefundsCents  int64 `json:"refunds_cents"`
	DisputesCents int64 `json:"disputes_cents"`
	FeesCents     int64 `json:"fees_cents"`
}

func newRunView(v *statement.RunView) StatementRunView {
	r := v.Run
	breaks := v.Breaks
	if breaks == nil {
		breaks = map[string]int64{}
	}
	return StatementRunView{RunID: r.ID, Provider: r.Provider, Date: r.Day, Status: r.Status, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
		ProviderLines: r.ProviderLines, Matched: r.Matched, Breaks: breaks, Error: r.Error,
		Totals: StatementRunTotals{Payments: r.Payments, GrossCents: r.GrossCents, Refunds: r.Refunds, RefundsCents: r.RefundsCents,
			DisputesCents: r.DisputesCents, FeesCents: r.FeesCents}}
}

// StatementBreakView is a statement break as the admin API shows it (GET
// /api/v1/admin/statements/breaks); the statement suite reads it too.
type StatementBreakView struct {
	ID                  int64                 `json:"id"`
	Provider            string                `json:"provider"`
	Date                string                `json:"date"`
	Kind                string                `json:"kind"`
	TradeNo             string                `json:"trade_no"`
	OrderNo             string                `json:"order_no"`
	RefundNo            string                `json:"refund_no"`
	ProviderAmountCents *int64                `json:"provider_amount_cents"`
	LedgerAmountCents   *int64                `json:"ledger_amount_cents"`
	Status              statement.BreakStatus `json:"status"`
	Action              string                `json:"action"`
	CreatedAt           time.Time             `json:"created_at"`
	ResolvedAt          *time.Time            `json:"resolved_at"`
	ResolvedBy          string                `json:"resolved_by"`
	Note                string                `json:"note"`
}

func newBreakView(b *statement.Break) StatementBreakView {
	return StatementBreakView{ID: b.ID, Provider: b.Provider, Date: b.Day, Kind: b.Kind, TradeNo: b.TradeNo, OrderNo: b.OrderNo,
		RefundNo: b.RefundNo, ProviderAmountCents: b.ProviderAmountCents, LedgerAmountCents: b.LedgerAmountCents, Status: b.Status,
		Action: b.Action, CreatedAt: b.CreatedAt, ResolvedAt: b.ResolvedAt, ResolvedBy: b.ResolvedBy, Note: b.Note}
}

// runStatement queues a run of one provider's day (or answers the one in flight).
func (h *Handler) runStatement(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Provider string `json:"provider"`
		Date     string `json:"date"`
	}
	if h.failed(w, r, decode(r, &b)) {
		return
	}
	run, err := h.uc.Statements.Open(r.Context(), b.Provider, b.Date)
	if h.failed(w, r, err) {
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"run_id": run.ID, "provider": run.Provider, "date": run.Day, "status": run.Status})
}

func (h *Handler) getStatementRun(w http.ResponseWriter, r *http.Request) {
	id, err := pathInt(r, "run_id")
	if h.failed(w, r, err) {
		return
	}
	v, err := h.uc.Statements.Get(r.Context(), id)
	if h.failed(w, r, err) {
		return
	}
	writeJSON(w, http.StatusOK, newRunView(v))
}

func (h *Handler) listStatementBreaks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	bs, err := h.uc.Statements.Breaks(r.Context(), q.Get("status"), q.Get("provider"))
	if h.failed(w, r, err) {
		return
	}
	out := make([]StatementBreakView, len(bs))
	for i := range bs {
		out[i] = newBreakView(&bs[i])
	}
	writeJSON(w, http.StatusOK, map[string][]StatementBreakView{"breaks": out})
}

func (h *Handler) resolveStatementBreak(w http.ResponseWriter, r *http.Request) {
	id, err := pathInt(r, "id")
	if h.failed(w, r, err) {
		return
	}
	var b struct {
		Note string `json:"note"`
	}
	if h.failed(w, r, decode(r, &b)) {
		return
	}
	br, err := h.uc.Statements.Resolve(r.Context(), id, b.Note)
	if h.failed(w, r, err) {
		return
	}
	writeJSON(w, http.StatusOK, newBreakView(br))
}
