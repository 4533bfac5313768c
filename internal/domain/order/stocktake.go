package order

import (
	"context"
	"strconv"
	"time"

	"orderflow/internal/infra/failpoint"
	"orderflow/internal/infra/stock"
	"orderflow/model"

	"go.uber.org/zap"
)

// stockTake is what one create took from the Redis counter.
type stockTake struct {
	token string // makes a re-sent take or give-back a no-op (stock.Take)
	qty   int
	taken bool // the counter handed the stock out; false: the database decides alone
}

// takeStock asks the Redis counter, building it from the database when it
// is missing, and checking the ledger before it trusts a short answer (see
// checkShort). Redis being unreachable is not "sold out": the database
// decides.
func (s *Service) takeStock(ctx context.Context, p *model.Product, qty int) (stockTake, error) {
	t := stockTake{token: newToken(), qty: qty}
	take := s.stock.Take
	for range 3 {
		out, err := take(ctx, p.ID, t.token, qty)
		if err != nil {
			s.log.Warn("stock counter unavailable; the database decides", zap.Int64("product_id", p.ID), zap.Error(err))
			return t, nil
		}
		switch out {
		case stock.Taken:
			t.taken = true
			return t, nil
		case stock.Missing:
			if err := s.buildCounter(ctx, p); err != nil {
				s.log.Warn("stock counter rebuild failed; the database decides", zap.Int64("product_id", p.ID), zap.Error(err))
				return t, nil
			}
		case stock.Short:
			switch s.checkShort(ctx, p, qty) {
			case shortTrue:
				return t, ErrOutOfStock
			case shortLedgerHasStock:
				take = s.stock.TakeAnyway
			}
		}
	}
	return t, nil // the counter keeps changing under us: the database decides
}

// buildCounter builds a missing counter from the ledger, through the same
// compare-and-set as every rebuild: a SETNX of a count read before a close
// committed would drop that close's restore (it found no counter to add to).
// If another process built it first, its counter stands. In this process
// one create builds it and the others that meet it wait (counterBuilds).
func (s *Service) buildCounter(ctx context.Context, p *model.Product) error {
	return s.counterBuilds.do(ctx, p.ID, func() error {
		snapshot := SnapshotFor(ctx, s.store, p, s.clock.Now())
		_, err := s.stock.Build(ctx, p.ID, func() (int64, []stock.Restored, error) {
			n, restored, err := snapshot()
			_ = failpoint.Inject(failpoint.StockRebuildRead, strconv.FormatInt(p.ID, 10))
			return n, restored, err
		})
		return err
	})
}

// What a short counter turned out to be.
type shortVerdict int

const (
	shortTrue           shortVerdict = iota // the ledger agrees: out of stock
	shortRepaired                           // the counter was below the ledger for a while and is reset: take again
	shortLedgerHasStock                     // the ledger has stock: take anyway, the database decides
)

// checkShort asks the ledger whether a short counter is right, at most once
// per product per ShortCheckInterval in this process (ShortCheckInterval
// says what happens between checks and when the counter is repaired).
func (s *Service) checkShort(ctx context.Context, p *model.Product, qty int) shortVerdict {
	now := s.clock.Now()
	if last, ok := s.shortChecks.recent(p.ID, now); ok {
		if last.ledger >= int64(qty) {
			return shortLedgerHasStock
		}
		return shortTrue
	}
	v, ok, err := s.stock.Get(ctx, p.ID)
	if err != nil || !ok {
		return shortLedgerHasStock // gone or unreachable: the loop rebuilds, or the database decides
	}
	n, err := s.store.SellableStock(ctx, p)
	if err != nil {
		s.log.Warn("short stock counter not checked against the ledger", zap.Int64("product_id", p.ID), zap.Error(err))
		return shortTrue
	}
	prev, had := s.shortChecks.record(p.ID, now, n, n-v)
	if n < int64(qty) {
		return shortTrue
	}
	log := s.log.With(zap.Int64("product_id", p.ID), zap.Int64("ledger_stock", n), zap.Int64("counter", v))
	if !had || prev.gap != n-v {
		log.Info("stock counter short while the ledger has stock; the database decides")
		return shortLedgerHasStock
	}
	if err := s.stock.Resync(ctx, p.ID, SnapshotFor(ctx, s.store, p, now)); err != nil {
		log.Warn("stock counter below the ledger and not repaired; the database decides", zap.Error(err))
		return shortLedgerHasStock
	}
	log.Warn("stock counter was below the ledger; repaired from it", zap.Int64("gap", n-v), zap.Duration("gap_seen_for", now.Sub(prev.at)))
	s.shortChecks.record(p.ID, now, n, 0)
	return shortRepaired
}

// SnapshotFor is the ledger side of a stock counter resync.
func SnapshotFor(ctx context.Context, store *model.Store, p *model.Product, now time.Time) func() (int64, []stock.Restored, error) {
	return func() (int64, []stock.Restored, error) {
		n, flows, err := store.StockSnapshot(ctx, p, now.Add(-stock.RecentRestores))
		restored := make([]stock.Restored, len(flows))
		for i, f := range flows {
			restored[i] = stock.Restored{OrderNo: f.OrderNo, FlowType: f.FlowType}
		}
		return n, restored, err
	}
}

// undoStockTake gives back what Redis handed out for a create that did not
// commit. When the database said "out of stock" the counter was wrong, so it
// is reset from the database instead.
func (s *Service) undoStockTake(ctx context.Context, p *model.Product, t stockTake, counterWrong bool) {
	ctx = context.WithoutCancel(ctx)
	var err error
	switch {
	case counterWrong:
		err = s.stock.Resync(ctx, p.ID, SnapshotFor(ctx, s.store, p, s.clock.Now()))
	case t.taken:
		err = s.stock.Put(ctx, p.ID, t.token, t.qty)
	default:
		return // the counter handed out nothing
	}
	if err != nil {
		s.log.Warn("stock counter not restored; the next short answer or reconciliation repairs it", zap.Int64("product_id", p.ID), zap.Error(err))
	}
}
