package handler

import (
	"net/http"
	"time"

	"orderflow/internal/domain/order"
)

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
	if h.failed(w, r, decode(r, &b)) {
		return
	}
	c := callerOf(r)
	if h.failed(w, r, c.actingAs(b.UserID)) {
		return
	}
	if b.ProductID <= 0 {
		writeError(w, r, h.log, errBadProduct)
		return
	}
	key, err := idempotencyKey(r)
	if h.failed(w, r, err) {
		return
	}
	res, err := h.uc.Orders.Create(r.Context(), order.CreateRequest{
		UserID: c.userID, ProductID: b.ProductID, Quantity: b.Quantity, IdempotencyKey: key,
	})
	if h.failed(w, r, err) {
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
	who := viewerOf(r)
	v, err := h.uc.Orders.Get(r.Context(), r.PathValue("order_no"), who)
	h.reply(w, r, http.StatusOK, v, err)
}

// viewerOf is who reads or cancels an order: the admin, or the calling buyer.
func viewerOf(r *http.Request) order.Viewer {
	if c := callerOf(r); !c.admin {
		return order.Viewer{UserID: c.userID}
	}
	return order.Viewer{Admin: true}
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
