package order

import (
	"context"
	"sync"
	"time"

	"orderflow/model"
)

// productTTL is how long a product read stays in the process. What create
// and deliver use of a product — kind, price, days, credit, whether its stock
// is limited — never changes after it is created (its stock count does, and
// is never read from here), so the TTL only bounds memory, not staleness.
const productTTL = time.Minute

// productCache keeps products in the process: one SELECT per product and
// minute instead of one per create and per delivery. Unknown products are
// not cached, so a product is orderable as soon as it is created.
type productCache struct {
	mu      sync.Mutex
	entries map[int64]cachedProduct
}

type cachedProduct struct {
	p     model.Product
	until time.Time
}

// product returns product id, from the cache when it holds it.
func (s *Service) product(ctx context.Context, id int64) (*model.Product, error) {
	now := s.clock.Now()
	c := &s.products
	c.mu.Lock()
	e, ok := c.entries[id]
	c.mu.Unlock()
	if ok && now.Before(e.until) {
		p := e.p
		return &p, nil
	}
	p, err := s.store.ProductByID(ctx, id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= maxCachedProducts {
		c.entries = map[int64]cachedProduct{}
	}
	c.entries[id] = cachedProduct{p: *p, until: now.Add(productTTL)}
	c.mu.Unlock()
	return p, nil
}

// maxCachedProducts bounds the cache; past it, it starts over.
const maxCachedProducts = 10000
