package handler

import (
	"io"
	"net/http"
	"time"

	"orderflow/internal/domain/bounds"
	"orderflow/internal/domain/order"
	"orderflow/internal/infra/sign"
)

type paymentBody struct {
	OrderNo     string `json:"order_no"`
	TradeNo     string `json:"trade_no"`
	AmountCents int64  `json:"amount_cents"`
	// PaidAt is the simulator's time of the payment (its statement day);
	// absent from an older simulator.
	PaidAt time.Time `json:"paid_at"`
}

// signedBody reads the raw body and checks its signature before anything
// else looks at it.
func (h *Handler) signedBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 64<<10))
	if err != nil {
		return nil, errBodyTooLarge
	}
	if !sign.Valid(h.paySecret, body, r.Header.Get(sign.Header)) {
		return nil, errBadSignature
	}
	return body, nil
}

// checkPayment: an amount no order can have (1..10^12 cents) is refused
// before anything is recorded, like a malformed body.
func checkPayment(b paymentBody) error {
	switch {
	case b.OrderNo == "":
		return errBadOrderNo
	case b.TradeNo == "" || len(b.TradeNo) > 64:
		return errBadTradeNo
	}
	return bounds.CheckAmount(b.AmountCents, 1)
}

func (h *Handler) paymentNotify(w http.ResponseWriter, r *http.Request) {
	body, err := h.signedBody(r)
	if h.failed(w, r, err) {
		return
	}
	var b paymentBody
	if h.failed(w, r, decodeJSON(body, &b)) {
		return
	}
	if h.failed(w, r, checkPayment(b)) {
		return
	}
	if _, err := h.uc.Orders.Pay(r.Context(), order.Payment{OrderNo: b.OrderNo, TradeNo: b.TradeNo, AmountCents: b.AmountCents, At: b.PaidAt}); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"result": "success"})
}
