package handler

import (
	"context"
	"net/http"

	"orderflow/internal/domain/trail"
)

// readByNo serves the read of one object named by a number in the path
// (order_no, group_no): one use-case call, its view or its error.
func readByNo[T any](h *Handler, key string, read func(context.Context, string) (T, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := read(r.Context(), r.PathValue(key))
		h.reply(w, r, http.StatusOK, v, err)
	}
}

// readByID is readByNo for an object named by a positive id in the path.
func readByID[T any](h *Handler, read func(context.Context, int64) (T, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r)
		if h.failed(w, r, err) {
			return
		}
		v, err := read(r.Context(), id)
		h.reply(w, r, http.StatusOK, v, err)
	}
}

// retryByNo serves an operator's retry of one object named by a number in
// the path: the use case queues it again, the answer says so.
func retryByNo(h *Handler, key string, retry func(context.Context, string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h.reply(w, r, http.StatusOK, map[string]string{"result": "queued"}, retry(r.Context(), r.PathValue(key)))
	}
}

// auditTrail serves one object's audit trail, oldest first.
func (h *Handler) auditTrail(w http.ResponseWriter, r *http.Request) {
	entries, err := h.uc.Audit.For(r.Context(), r.URL.Query().Get("object"))
	h.reply(w, r, http.StatusOK, map[string][]trail.Entry{"entries": entries}, err)
}
