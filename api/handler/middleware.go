package handler

import (
	"context"
	"net/http"
	"strings"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/infra/operators"

	"go.uber.org/zap"
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

// caller is who a request acts as: a buyer (userID), or an operator.
type caller struct {
	userID int64
	admin  bool
}

// forbidden refuses an operator whose role does not cover need, saying
// which role the request needs; it reports whether it did.
func (h *Handler) forbidden(w http.ResponseWriter, r *http.Request, op operators.Operator, need operators.Role) bool {
	if op.Role.Covers(need) {
		return false
	}
	h.log.Warn("operator refused", zap.String("operator", op.Name), zap.String("role", string(op.Role)),
		zap.String("method", r.Method), zap.String("path", r.URL.Path))
	writeError(w, r, h.log, apperr.New(apperr.Forbidden, "forbidden",
		"operator "+op.Name+" is a "+string(op.Role)+"; this needs the "+string(need)+" role"))
	return true
}

// requireUser admits buyers (and, where allowOperators is true, operators
// whose role covers the method: a viewer reads an order but cannot cancel it).
func (h *Handler) requireUser(allowOperators bool, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token := bearer(r)
		c := &caller{}
		if op, ok := h.ops.ByToken(token); ok && allowOperators {
			if h.forbidden(w, r, op, operators.NeedFor(r.Method)) {
				return
			}
			c.admin = true
			r = r.WithContext(operators.WithOperator(r.Context(), op))
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

// requireRole admits an operator whose role covers need (401 for a token
// that is no operator's, 403 forbidden for a role too small), and hands
// the operator to the handler in the request's context.
func (h *Handler) requireRole(need operators.Role, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op, ok := h.ops.ByToken(bearer(r))
		if !ok {
			writeError(w, r, h.log, errUnauthorized)
			return
		}
		if h.forbidden(w, r, op, need) {
			return
		}
		next.ServeHTTP(w, r.WithContext(operators.WithOperator(r.Context(), op)))
	})
}
