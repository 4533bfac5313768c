package handler

import (
	"net/http"
	"strconv"
	"time"

	"orderflow/internal/domain/catalog"
	"orderflow/internal/domain/order"
)

func pathID(r *http.Request) (int64, error) { return pathInt(r, "id") }

// pathInt reads a positive integer path value.
func pathInt(r *http.Request, key string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue(key), 10, 64)
	if err != nil || id <= 0 {
		return 0, errBadID
	}
	return id, nil
}

func (h *Handler) createUser(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Name         string `json:"name"`
		BalanceCents int64  `json:"balance_cents"`
	}
	if h.failed(w, r, decode(r, &b)) {
		return
	}
	u, err := h.uc.Accounts.Create(r.Context(), b.Name, b.BalanceCents)
	h.reply(w, r, http.StatusCreated, u, err)
}

func (h *Handler) getUser(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if h.failed(w, r, err) {
		return
	}
	u, err := h.uc.Accounts.Get(r.Context(), id)
	if h.failed(w, r, err) {
		return
	}
	writeJSON(w, http.StatusOK, struct {
		ID                    int64      `json:"id"`
		Name                  string     `json:"name"`
		BalanceCents          int64      `json:"balance_cents"`
		SubscriptionExpiresAt *time.Time `json:"subscription_expires_at"`
	}{u.ID, u.Name, u.BalanceCents, u.SubscriptionExpiresAt})
}

func (h *Handler) createProduct(w http.ResponseWriter, r *http.Request) {
	var b catalog.NewProduct
	if h.failed(w, r, decode(r, &b)) {
		return
	}
	id, err := h.uc.Catalog.CreateProduct(r.Context(), b)
	if h.failed(w, r, err) {
		return
	}
	writeJSON(w, http.StatusCreated, map[string]int64{"id": id})
}

func (h *Handler) addCards(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if h.failed(w, r, err) {
		return
	}
	var b struct {
		Codes []string `json:"codes"`
	}
	if h.failed(w, r, decode(r, &b)) {
		return
	}
	n, err := h.uc.Catalog.AddCards(r.Context(), id, b.Codes)
	if h.failed(w, r, err) {
		return
	}
	writeJSON(w, http.StatusCreated, map[string]int{"added": n})
}

func (h *Handler) listOrders(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var status *order.Status
	if s := q.Get("status"); s != "" {
		st, ok := order.ParseStatus(s)
		if !ok {
			writeError(w, r, h.log, errBadStatus)
			return
		}
		status = &st
	}
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	before, _ := strconv.ParseInt(q.Get("before_id"), 10, 64)
	if before <= 0 {
		before = 1 << 62
	}
	orders, err := h.uc.Orders.List(r.Context(), status, before, limit)
	if h.failed(w, r, err) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"orders": orders})
}
