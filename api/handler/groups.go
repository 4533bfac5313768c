package handler

import (
	"net/http"
	"strings"
	"time"
)

func (h *Handler) createGroup(w http.ResponseWriter, r *http.Request) {
	var b struct {
		UserID     *int64 `json:"user_id"`
		Title      string `json:"title"`
		PriceCents int64  `json:"price_cents"`
		Deadline   string `json:"deadline"`
	}
	if h.failed(w, r, decode(r, &b)) {
		return
	}
	c := callerOf(r)
	if h.failed(w, r, c.actingAs(b.UserID)) {
		return
	}
	deadline, err := time.Parse(time.RFC3339Nano, b.Deadline)
	if err != nil {
		writeError(w, r, h.log, errBadDeadline)
		return
	}
	g, err := h.uc.Groups.Create(r.Context(), c.userID, b.Title, b.PriceCents, deadline)
	if h.failed(w, r, err) {
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"group_no": g.GroupNo, "status": strings.ToLower(g.Status.String()), "deadline": g.Deadline})
}

func (h *Handler) joinGroup(w http.ResponseWriter, r *http.Request) {
	var b struct {
		UserID *int64 `json:"user_id"`
	}
	if r.ContentLength != 0 {
		if h.failed(w, r, decode(r, &b)) {
			return
		}
	}
	c := callerOf(r)
	if h.failed(w, r, c.actingAs(b.UserID)) {
		return
	}
	if h.failed(w, r, h.uc.Groups.Join(r.Context(), r.PathValue("group_no"), c.userID)) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"group_no": r.PathValue("group_no"), "user_id": c.userID, "joined": true})
}
