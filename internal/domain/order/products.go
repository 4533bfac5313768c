package order

import (
	"context"
	"time"

	"orderflow/internal/infra/ttlcache"
	"orderflow/model"
)

// What create and deliver use of a product — kind, price, days, credit,
// whether its stock is limited — never changes after it is created (its stock
// count does, and is never read from here), so products are kept in the
// process: one SELECT per product and minute instead of one per create and
// per delivery.
func newProductCache() *ttlcache.Cache[int64, model.Product] {
	return ttlcache.New[int64, model.Product](time.Minute, 10000)
}

// product returns product id, from the cache when it holds it.
func (s *Service) product(ctx context.Context, id int64) (*model.Product, error) {
	now := s.clock.Now()
	if p, ok := s.products.Get(id, now); ok {
		return &p, nil
	}
	p, err := s.store.ProductByID(ctx, id)
	if err != nil {
		return nil, err
	}
	s.products.Put(id, *p, now)
	return p, nil
}
