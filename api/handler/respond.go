package handler

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"orderflow/api/httperr"
	"orderflow/internal/domain/apperr"

	"go.uber.org/zap"
)

const maxBody = 4 << 20

// decode reads a JSON body into dst; a bad body is a 400, never a 500.
func decode(r *http.Request, dst any) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		return errBodyTooLarge
	}
	return decodeJSON(body, dst)
}

// fieldCodes is the error code of each request body field, answered when
// the field holds the wrong JSON type or a number its Go type cannot hold
// (beyond int64, fractional): the same code as a value out of its bound.
var fieldCodes = map[string]string{
	"name": "invalid_name", "balance_cents": "invalid_balance",
	"sku": "invalid_sku", "kind": "invalid_kind", "price_cents": "invalid_price", "days": "invalid_days",
	"credit_cents": "invalid_credit", "stock": "invalid_stock", "codes": "invalid_codes",
	"product_id": "invalid_product", "quantity": "invalid_quantity", "user_id": "invalid_user_id",
	"title": "invalid_title", "deadline": "invalid_deadline",
	"order_no": "invalid_order_no", "trade_no": "invalid_trade_no", "amount_cents": "invalid_amount",
	"out_request_no": "invalid_refund_notify", "status": "invalid_refund_notify",
	"reference": "invalid_reference", "note": "invalid_note",
	"provider": "unknown_provider", "date": "invalid_date",
}

// decodeJSON unmarshals a body; a field of the wrong type is answered with
// that field's code, anything else that is not the JSON wanted with errBadJSON.
func decodeJSON(body []byte, dst any) error {
	err := json.Unmarshal(body, dst)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if code, ok := fieldCodes[te.Field]; ok {
			return apperr.New(apperr.Invalid, code, te.Field+" cannot be a "+te.Value)
		}
	}
	return errBadJSON
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// failed answers err, when there is one, and says so: a handler's early
// return is `if h.failed(w, r, step()) { return }`.
func (h *Handler) failed(w http.ResponseWriter, r *http.Request, err error) bool {
	if err == nil {
		return false
	}
	writeError(w, r, h.log, err)
	return true
}

// reply is a handler's last step: the use case's result with status, or its error.
func (h *Handler) reply(w http.ResponseWriter, r *http.Request, status int, v any, err error) {
	if !h.failed(w, r, err) {
		writeJSON(w, status, v)
	}
}

// writeError maps an error to {"error":{code,message}}: a business error
// keeps its code; anything else is logged and shown as a bare 500.
func writeError(w http.ResponseWriter, r *http.Request, log *zap.Logger, err error) {
	var body errorBody
	status := httperr.Status(err)
	var ae *apperr.Error
	if errors.As(err, &ae) {
		body.Error.Code, body.Error.Message = ae.Code, ae.Message
	} else {
		log.Error("request failed", zap.String("method", r.Method), zap.String("path", r.URL.Path), zap.Error(err))
		body.Error.Code, body.Error.Message = "internal", "internal error; it has been logged"
	}
	writeJSON(w, status, body)
}
