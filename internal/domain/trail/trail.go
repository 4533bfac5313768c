// Package trail writes the audit trail of the admin actions: who did what
// to which object, in the transaction of the action's effect.
package trail

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/infra/operators"
	"orderflow/model"
)

// Actions, as the trail names them.
const (
	OrderRetry    = "order_retry"
	OrderRefund   = "order_refund"
	OrderPayment  = "order_payment"
	RefundRetry   = "refund_retry"
	RefundResolve = "refund_resolve"
	GroupRetry    = "group_retry"
	WebhookRetry  = "webhook_retry"
	UserCreate    = "user_create"
	ProductCreate = "product_create"
	CardsAdd      = "cards_add"
	CardsReveal   = "cards_reveal"
)

// UserObject and ProductObject name a user and a product in the trail
// (orders, refunds and groups go by their numbers).
func UserObject(id int64) string { return "user:" + strconv.FormatInt(id, 10) }

// ProductObject is a product's name in the trail; see UserObject.
func ProductObject(id int64) string { return "product:" + strconv.FormatInt(id, 10) }

// Detail is what an action changed (from/to status, amount, a new
// number…) and the operator's reason when the request carried one.
type Detail map[string]any

// Record writes the entry of action on object in tx, the transaction of
// the action's effect; call it only after the conditional move that made
// the effect, so an action that changed nothing (or rolled back) leaves no
// entry. The actor is the operator the request was admitted as. A call
// with no operator in ctx is the system's own (a sweep's re-queue, a
// provider's callback) and is not an admin action: it writes nothing.
func Record(ctx context.Context, tx *model.Store, at time.Time, action, object string, detail Detail) error {
	op, ok := operators.FromContext(ctx)
	if !ok {
		return nil
	}
	if detail == nil {
		detail = Detail{}
	}
	body, err := json.Marshal(detail)
	if err != nil {
		return fmt.Errorf("audit %s of %s: %w", action, object, err)
	}
	return tx.InsertAuditLater(ctx, model.AuditEntry{At: at, Actor: op.Name, Action: action, Object: object, Detail: body})
}

// Recorded is move, a conditional move, followed in its transaction by
// the entry of action on object (Record) once it has moved: a move that
// changed nothing records nothing.
func Recorded(ctx context.Context, at time.Time, action, object string, detail Detail, move func(tx *model.Store) (bool, error)) func(tx *model.Store) (bool, error) {
	return func(tx *model.Store) (bool, error) {
		moved, err := move(tx)
		if err != nil || !moved {
			return false, err
		}
		return true, Record(ctx, tx, at, action, object, detail)
	}
}

// ErrBadObject refuses a trail query without an object, or with one
// longer than any order, refund or group number.
var ErrBadObject = apperr.New(apperr.Invalid, "invalid_object", "object must be an order, refund or group number of 1..64 characters")

// Trail reads the audit trail for operators.
type Trail struct{ Store *model.Store }

// For is object's trail, oldest first (at most model.AuditPage entries).
func (t *Trail) For(ctx context.Context, object string) ([]model.AuditEntry, error) {
	return t.ForAll(ctx, object)
}

// ForAll is the trail of several objects together (an order and its
// refunds), oldest first, in one read (at most model.AuditPage entries).
func (t *Trail) ForAll(ctx context.Context, objects ...string) ([]model.AuditEntry, error) {
	for _, o := range objects {
		if o == "" || len(o) > 64 {
			return nil, ErrBadObject
		}
	}
	out, err := t.Store.AuditForAll(ctx, objects)
	if err != nil {
		return nil, fmt.Errorf("audit trail of %s: %w", strings.Join(objects, ", "), err)
	}
	return out, nil
}
