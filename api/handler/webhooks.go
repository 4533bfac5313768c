package handler

import (
	"net/http"
	"strconv"

	"orderflow/internal/domain/apperr"
)

// errBadLimit: a list's limit that is not an integer in 1..1000.
var errBadLimit = apperr.New(apperr.Invalid, "invalid_limit", "limit must be an integer from 1 to 1000")

// listWebhooks: GET /api/v1/admin/webhooks?status=pending|delivered|failing&limit=
func (h *Handler) listWebhooks(w http.ResponseWriter, r *http.Request) {
	limit := 100
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, r, h.log, errBadLimit)
			return
		}
		limit = n
	}
	hooks, err := h.uc.Webhooks.List(r.Context(), r.URL.Query().Get("status"), limit)
	h.reply(w, r, http.StatusOK, map[string]any{"webhooks": hooks}, err)
}

// retryWebhook: POST /api/v1/admin/webhooks/{id}/retry
func (h *Handler) retryWebhook(w http.ResponseWriter, r *http.Request) {
	v, err := h.uc.Webhooks.Retry(r.Context(), r.PathValue("id"))
	h.reply(w, r, http.StatusOK, v, err)
}
