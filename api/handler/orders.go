package handler

import (
	"net/http"
	"time"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/domain/order"
)

var errBadProduct = apperr.New(apperr.Invalid, "invalid_product", "product_id must be a positive integer")

type createOrderBody struct {
	UserID    *int64 `json:"user_id"`
	ProductID int64  `json:"product_id"`
	Quantity  int    `json:"quantity"`
}

type createdOrder struct {
	OrderNo     string    `json:"order_no"`
	Status      string    `json:"status"`
	AmountCents int64     `json:"amount_cents"`
	ExpireAt    time.Time `json:"expire_at"`
}

func (h *Handler) createOrder(w http.ResponseWriter, r *http.Request) {
	var b createOrderBody
	if err := decode(r, &b); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	c := callerOf(r)
	if b.UserID != nil && *b.UserID != c.userID {
		writeError(w, r, h.log, errForbidden)
		return
	}
	if b.ProductID <= 0 {
		writeError(w, r, h.log, errBadProduct)
		return
	}
	key, err := idempotencyKey(r)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	res, err := h.uc.Orders.Create(r.Context(), order.CreateRequest{
		UserID: c.userID, ProductID: b.ProductID, Quantity: b.Quantity, IdempotencyKey: key,
	})
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	status := http.StatusCreated
	if res.Replay {
		status = http.StatusOK
	}
	o := res.Order
	writeJSON(w, status, createdOrder{OrderNo: o.OrderNo, Status: o.Status.String(), AmountCents: o.AmountCents, ExpireAt: o.ExpireAt})
}

func (h *Handler) getOrder(w http.ResponseWriter, r *http.Request) {
	c := callerOf(r)
	who := order.Viewer{Admin: c.admin}
	if !c.admin {
		who.UserID = c.userID
	}
	v, err := h.uc.Orders.Get(r.Context(), r.PathValue("order_no"), who)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// idempotencyKey reads the Idempotency-Key header: "" when none was sent. A
// header sent empty or more than once is refused like a malformed key;
// order.Create checks the key itself.
func idempotencyKey(r *http.Request) (string, error) {
	vals := r.Header.Values("Idempotency-Key")
	switch {
	case len(vals) == 0:
		return "", nil
	case len(vals) > 1 || vals[0] == "":
		return "", order.ErrBadIdempotencyKey
	}
	return vals[0], nil
}
