package order

import (
	"context"
	"encoding/json"
	"errors"

	"orderflow/internal/infra/ordercache"
	"orderflow/model"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// cacheable says which views are worth caching: those of orders at rest.
// paid and claimed orders change within milliseconds; caching them would
// mostly serve stale reads.
func cacheable(st model.OrderStatus) bool {
	return st == model.OrderFinished || st == model.OrderClosed || st == model.OrderFailed || st == model.OrderRefunded
}

func (s *Service) cachedView(ctx context.Context, orderNo string) (*View, bool) {
	ctx, cancel := context.WithTimeout(ctx, ordercache.OpTimeout)
	defer cancel()
	b, err := s.rdb.Get(ctx, ordercache.KeyNo(orderNo)).Bytes()
	if err != nil {
		if !errors.Is(err, redis.Nil) {
			s.log.Debug("order cache read failed", zap.String("order_no", orderNo), zap.Error(err))
		}
		return nil, false
	}
	var v View
	if json.Unmarshal(b, &v) != nil {
		return nil, false
	}
	return &v, true
}

// storeView fills the cache (cache-aside), then checks the ledger again: a
// move that committed between our read and our SET deleted the keys before
// we wrote them, so our entry would show the order as it was until the TTL.
// Any move committed before the check is seen by it (READ COMMITTED; on
// Galera a causal read, as the move may have committed on another node) and
// we drop what we wrote; any move after it deletes the keys itself (the
// ledger's after-commit work).
func (s *Service) storeView(ctx context.Context, o *model.Order, v *View) {
	ctx, cancel := context.WithTimeout(ctx, ordercache.OpTimeout)
	defer cancel()
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	for _, k := range []string{ordercache.KeyNo(v.OrderNo), ordercache.KeyID(o.ID)} {
		if err := s.rdb.Set(ctx, k, b, s.set.CacheTTL).Err(); err != nil {
			return
		}
	}
	if !s.viewCurrent(ctx, o, v) {
		ordercache.Drop(ctx, s.rdb, s.log, model.OrderRef{ID: o.ID, No: o.OrderNo})
	}
}

// viewCurrent reports whether the ledger still says what v shows: the same
// status and update time, and the same refunds and disputes in the same
// statuses. Its
// reads are causal (model.Store.Causal): on Galera the node this API reads
// may not have applied a move another node committed, and deleted the keys
// for, before our SET; an ordinary read would then keep the stale entry for
// the TTL. The fill's own read needs no wait: this check catches what it
// missed, and only at-rest views get here, so the wait's cost (a round trip
// through the cluster) is paid once per cache fill, not per request.
func (s *Service) viewCurrent(ctx context.Context, o *model.Order, v *View) bool {
	ledger := s.store.Causal()
	cur, err := ledger.OrderByID(ctx, o.ID)
	if err != nil || cur.Status != o.Status || !cur.UpdatedAt.Equal(o.UpdatedAt) {
		return false
	}
	refunds, err := ledger.RefundsForOrder(ctx, o.ID)
	if err != nil || !sameRows(refunds, v.Refunds, func(r model.Refund, rv RefundView) bool {
		return r.RefundNo == rv.RefundNo && r.Status == rv.Status
	}) {
		return false
	}
	disputes, err := ledger.DisputesForOrder(ctx, o.ID)
	return err == nil && sameRows(disputes, v.Disputes, func(d model.Dispute, dv DisputeView) bool {
		return d.DisputeID == dv.DisputeID && d.Status == dv.Status
	})
}

// sameRows reports whether the view lists the ledger's rows, one for one in
// the same order, as same judges a row against its view.
func sameRows[R, V any](rows []R, views []V, same func(R, V) bool) bool {
	if len(rows) != len(views) {
		return false
	}
	for i := range rows {
		if !same(rows[i], views[i]) {
			return false
		}
	}
	return true
}
