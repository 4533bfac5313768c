package handler

import (
	"net/http"
	"strconv"

	"orderflow/internal/domain/order"
	"orderflow/internal/domain/refund"
	"orderflow/internal/infra/metrics"
)

func (h *Handler) cancelOrder(w http.ResponseWriter, r *http.Request) {
	who := viewerOf(r)
	if h.failed(w, r, h.uc.Orders.Cancel(r.Context(), r.PathValue("order_no"), who)) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"order_no": r.PathValue("order_no"), "status": order.StatusClosed.String()})
}

func (h *Handler) refundNotify(w http.ResponseWriter, r *http.Request) {
	body, err := h.signedBody(r)
	if h.failed(w, r, err) {
		return
	}
	var b struct {
		OutRequestNo string `json:"out_request_no"`
		Status       string `json:"status"`
	}
	if h.failed(w, r, decodeJSON(body, &b)) {
		return
	}
	if b.OutRequestNo == "" || b.Status == "" {
		writeError(w, r, h.log, errBadRefundNotify)
		return
	}
	if h.failed(w, r, h.uc.Refunds.Callback(r.Context(), b.OutRequestNo, b.Status)) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"result": "success"})
}

func (h *Handler) refundOrder(w http.ResponseWriter, r *http.Request) {
	no, status, err := h.uc.Orders.RefundFailed(r.Context(), r.PathValue("order_no"))
	if h.failed(w, r, err) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"order_no": r.PathValue("order_no"), "status": status.String(), "refund_no": no})
}

type refundOrderBody struct {
	AmountCents int64  `json:"amount_cents"`
	Reason      string `json:"reason"`
}

// refundOrderPart is an operator's refund of any amount of a paid order.
// The same Idempotency-Key again answers the same refund, 201 again.
func (h *Handler) refundOrderPart(w http.ResponseWriter, r *http.Request) {
	var b refundOrderBody
	if h.failed(w, r, decode(r, &b)) {
		return
	}
	key, err := idempotencyKey(r)
	if h.failed(w, r, err) {
		return
	}
	rf, err := h.uc.Orders.Refund(r.Context(), r.PathValue("order_no"), order.RefundRequest{AmountCents: b.AmountCents, Reason: b.Reason, Key: key})
	if h.failed(w, r, err) {
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"refund_no": rf.RefundNo, "status": rf.Status, "amount_cents": rf.AmountCents})
}

type refundView struct {
	RefundNo    string        `json:"refund_no"`
	OrderNo     string        `json:"order_no"`
	TradeNo     string        `json:"trade_no"`
	AmountCents int64         `json:"amount_cents"`
	Reason      string        `json:"reason"`
	Status      refund.Status `json:"status"`
	Attempts    int           `json:"attempts"`
	LastError   string        `json:"last_error"`
	Provider    string        `json:"provider_status"`
}

func (h *Handler) listRefunds(w http.ResponseWriter, r *http.Request) {
	var status refund.Status // "": every status
	if s := r.URL.Query().Get("status"); s != "" {
		st, ok := refund.ParseStatus(s)
		if !ok {
			writeError(w, r, h.log, errBadStatus)
			return
		}
		status = st
	}
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	refunds, err := h.uc.Refunds.List(r.Context(), status, limit)
	if h.failed(w, r, err) {
		return
	}
	out := make([]refundView, 0, len(refunds))
	for _, x := range refunds {
		out = append(out, refundView{x.RefundNo, x.OrderNo, x.TradeNo, x.AmountCents, x.Reason, x.Status, x.Attempts, x.LastError, x.ProviderStatus})
	}
	writeJSON(w, http.StatusOK, map[string]any{"refunds": out})
}

func (h *Handler) retryRefund(w http.ResponseWriter, r *http.Request) {
	no, err := h.uc.Refunds.Retry(r.Context(), r.PathValue("refund_no"))
	if h.failed(w, r, err) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"refund_no": no, "status": refund.StatusProcessing})
}

func (h *Handler) resolveRefund(w http.ResponseWriter, r *http.Request) {
	if h.failed(w, r, h.uc.Refunds.Resolve(r.Context(), r.PathValue("refund_no"), "")) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"refund_no": r.PathValue("refund_no"), "status": refund.StatusSucceeded})
}

func (h *Handler) stats(w http.ResponseWriter, r *http.Request) {
	st, err := metrics.Collect(r.Context(), h.uc.Metrics, h.sources)
	h.reply(w, r, http.StatusOK, st, err)
}
