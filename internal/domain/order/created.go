package order

import (
	"time"

	"orderflow/internal/infra/ttlcache"
	"orderflow/model"
)

// createdOrder is what a payment's expected case needs of its order, and
// none of it ever changes: the row's key, its buyer (whose pending slot the
// payment frees) and its amount.
type createdOrder struct {
	id, userID, amountCents int64
}

// newCreatedCache keeps the orders a process created for a few minutes —
// when most of their payments arrive — so a payment that reaches the same
// process skips reading the order first. Nothing here is trusted: payExpected's
// move names the status it leaves (pending) and the generation it enters (1),
// so an order closed, paid by another trade or otherwise moved meanwhile
// fails the transaction, and Pay reads the order on its careful path.
func newCreatedCache() *ttlcache.Cache[string, createdOrder] {
	return ttlcache.New[string, createdOrder](3*time.Minute, 100_000)
}

// rememberCreated notes a new pending order.
func (s *Service) rememberCreated(o *model.Order, now time.Time) {
	s.created.Put(o.OrderNo, createdOrder{id: o.ID, userID: o.UserID, amountCents: o.AmountCents}, now)
}

// createdHere returns the order as created by this process — pending, in
// generation 0 — if it was, recently.
func (s *Service) createdHere(orderNo string, now time.Time) (*model.Order, bool) {
	c, ok := s.created.Get(orderNo, now)
	if !ok {
		return nil, false
	}
	return &model.Order{ID: c.id, OrderNo: orderNo, UserID: c.userID, AmountCents: c.amountCents, Status: model.OrderPending}, true
}
