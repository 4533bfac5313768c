package handler

import (
	"net/http"

	"orderflow/internal/domain/order"
)

// confirmPayment is an operator's manual payment confirmation: the money
// goes through the one payment path as provider manual.
func (h *Handler) confirmPayment(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Reference   string `json:"reference"`
		AmountCents int64  `json:"amount_cents"`
		Note        string `json:"note"`
	}
	if h.failed(w, r, decode(r, &b)) {
		return
	}
	no := r.PathValue("order_no")
	st, err := h.uc.Orders.ConfirmManual(r.Context(), order.ManualPayment{OrderNo: no, Reference: b.Reference, AmountCents: b.AmountCents, Note: b.Note})
	if h.failed(w, r, err) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"order_no": no, "status": st.String()})
}
