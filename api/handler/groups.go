package handler

import (
	"net/http"
	"strings"
	"time"

	"orderflow/internal/domain/apperr"
)

var errBadDeadline = apperr.New(apperr.Invalid, "invalid_deadline", "deadline must be an RFC 3339 time")

func (h *Handler) createGroup(w http.ResponseWriter, r *http.Request) {
	var b struct {
		UserID     *int64 `json:"user_id"`
		Title      string `json:"title"`
		PriceCents int64  `json:"price_cents"`
		Deadline   string `json:"deadline"`
	}
	if err := decode(r, &b); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	c := callerOf(r)
	if b.UserID != nil && *b.UserID != c.userID {
		writeError(w, r, h.log, errForbidden)
		return
	}
	deadline, err := time.Parse(time.RFC3339Nano, b.Deadline)
	if err != nil {
		writeError(w, r, h.log, errBadDeadline)
		return
	}
	g, err := h.uc.Groups.Create(r.Context(), c.userID, b.Title, b.PriceCents, deadline)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"group_no": g.GroupNo, "status": strings.ToLower(g.Status.String()), "deadline": g.Deadline})
}

func (h *Handler) joinGroup(w http.ResponseWriter, r *http.Request) {
	var b struct {
		UserID *int64 `json:"user_id"`
	}
	if r.ContentLength != 0 {
		if err := decode(r, &b); err != nil {
			writeError(w, r, h.log, err)
			return
		}
	}
	c := callerOf(r)
	if b.UserID != nil && *b.UserID != c.userID {
		writeError(w, r, h.log, errForbidden)
		return
	}
	if err := h.uc.Groups.Join(r.Context(), r.PathValue("group_no"), c.userID); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"group_no": r.PathValue("group_no"), "user_id": c.userID, "joined": true})
}

func (h *Handler) getGroup(w http.ResponseWriter, r *http.Request) {
	v, err := h.uc.Groups.Get(r.Context(), r.PathValue("group_no"))
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (h *Handler) retryGroup(w http.ResponseWriter, r *http.Request) {
	if err := h.uc.Groups.Retry(r.Context(), r.PathValue("group_no")); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"result": "queued"})
}
