package handler

import (
	"net/http"
	"time"

	"orderflow/apperr"
	"orderflow/order"
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
	res, err := h.uc.Orders.Create(r.Context(), order.CreateRequest{
		UserID: c.userID, ProductID: b.ProductID, Quantity: b.Quantity,
		IdempotencyKey: r.Header.Get("Idempotency-Key"),
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
