package handler

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"
)

type ctxKey int

const userKey ctxKey = 1

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if t, ok := strings.CutPrefix(h, "Bearer "); ok {
		return strings.TrimSpace(t)
	}
	return ""
}

// caller is who a request acts as: a buyer (userID), or the admin.
type caller struct {
	userID int64
	admin  bool
}

func (h *Handler) isAdmin(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(h.adminToken)) == 1
}

// requireUser admits buyers (and, where admin is true, the admin token).
func (h *Handler) requireUser(allowAdmin bool, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token := bearer(r)
		c := &caller{}
		if allowAdmin && h.isAdmin(token) {
			c.admin = true
		} else {
			id, err := h.uc.Accounts.UserID(r.Context(), token)
			if h.failed(w, r, err) {
				return
			}
			c.userID = id
		}
		next(w, r.WithContext(context.WithValue(r.Context(), userKey, c)))
	}
}

func callerOf(r *http.Request) *caller {
	c, _ := r.Context().Value(userKey).(*caller)
	return c
}

// actingAs checks a body's user_id: when sent, it must be the caller's own.
func (c *caller) actingAs(userID *int64) error {
	if userID != nil && *userID != c.userID {
		return errForbidden
	}
	return nil
}

// requireAdmin admits only the admin token.
func (h *Handler) requireAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.isAdmin(bearer(r)) {
			writeError(w, r, h.log, errUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
