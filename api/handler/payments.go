package handler

import (
	"encoding/json"
	"io"
	"net/http"

	"orderflow/apperr"
	"orderflow/order"
	"orderflow/sign"
)

var (
	errBadSignature = apperr.New(apperr.Unauthorized, "bad_signature", "X-Signature is missing or does not match the body")
	errBadPayment   = apperr.New(apperr.Invalid, "invalid_payment", "order_no, trade_no (≤64 chars) and a positive amount_cents are required")
)

type paymentBody struct {
	OrderNo     string `json:"order_no"`
	TradeNo     string `json:"trade_no"`
	AmountCents int64  `json:"amount_cents"`
}

// signedBody reads the raw body and checks its signature before anything
// else looks at it.
func (h *Handler) signedBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 64<<10))
	if err != nil {
		return nil, apperr.New(apperr.Invalid, "body_too_large", "request body is too large or unreadable")
	}
	if !sign.Valid(h.paySecret, body, r.Header.Get(sign.Header)) {
		return nil, errBadSignature
	}
	return body, nil
}

func (h *Handler) paymentNotify(w http.ResponseWriter, r *http.Request) {
	body, err := h.signedBody(r)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	var b paymentBody
	if json.Unmarshal(body, &b) != nil {
		writeError(w, r, h.log, errBadJSON)
		return
	}
	if b.OrderNo == "" || b.TradeNo == "" || len(b.TradeNo) > 64 || b.AmountCents <= 0 {
		writeError(w, r, h.log, errBadPayment)
		return
	}
	if _, err := h.uc.Orders.Pay(r.Context(), order.Payment{OrderNo: b.OrderNo, TradeNo: b.TradeNo, AmountCents: b.AmountCents}); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"result": "success"})
}
