package main

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
)

// fixtures are the buyers and the card product(s) every order phase uses,
// created through the admin API.
type fixtures struct {
	products []int64 // all card products
	used     int     // how many of them the order phases use (-products)
	price    int64
	userIDs  []int64
	tokens   []string
	keys     int // card keys added so far
	next     atomic.Int64
	nextProd atomic.Int64
}

// buyer hands out buyers round-robin (each may hold 5 pending orders).
func (f *fixtures) buyer() string {
	return f.tokens[int(f.next.Add(1))%len(f.tokens)]
}

// product hands out the order phases' card products round-robin.
func (f *fixtures) product() int64 {
	return f.products[int(f.nextProd.Add(1))%f.used]
}

// anyProduct hands out every card product round-robin (the close burst
// spreads its creates so they fit in one second).
func (f *fixtures) anyProduct() int64 {
	return f.products[int(f.nextProd.Add(1))%len(f.products)]
}

// closeProducts is how many products the close burst spreads over at least.
const closeProducts = 16

func createFixtures(ctx context.Context, c *apiClient, users, products int) (*fixtures, error) {
	f := &fixtures{price: 990, used: products}
	for i := range max(products, closeProducts) {
		id, err := c.createCardProduct(ctx, fmt.Sprintf("bench-card-%d-%s", i, randHex(4)), f.price)
		if err != nil {
			return nil, fmt.Errorf("create product: %w", err)
		}
		f.products = append(f.products, id)
	}
	f.userIDs, f.tokens = make([]int64, users), make([]string, users)
	err := parallel(ctx, users, 8, func(ctx context.Context, i int) error {
		id, tok, err := c.createUser(ctx, fmt.Sprintf("buyer-%d", i), 1_000_000)
		if err != nil {
			return fmt.Errorf("create user: %w", err)
		}
		f.userIDs[i], f.tokens[i] = id, tok
		return nil
	})
	return f, err
}

// topUp adds keys through the admin API (5,000 per request) until each of
// the given products has at least `each` sellable ones.
func (f *fixtures) topUp(ctx context.Context, c *apiClient, db *sql.DB, products []int64, each int) error {
	for _, pid := range products {
		sellable, err := queryInt(ctx, db, `SELECT COUNT(*) FROM card_keys WHERE product_id = ? AND status IN ('UNSOLD', 'RECYCLED')`, pid)
		if err != nil {
			return err
		}
		n := each - int(sellable)
		if n <= 0 {
			continue
		}
		const batch = 5000
		base := f.keys
		batches := (n + batch - 1) / batch
		err = parallel(ctx, batches, 2, func(ctx context.Context, b int) error {
			m := min(batch, n-b*batch)
			codes := make([]string, m)
			for j := range codes {
				codes[j] = fmt.Sprintf("BK-%d-%s", base+b*batch+j, randHex(4))
			}
			if err := c.addCards(ctx, pid, codes); err != nil {
				return fmt.Errorf("add %d keys: %w", len(codes), err)
			}
			return nil
		})
		if err != nil {
			return err
		}
		f.keys += n
	}
	return nil
}

// ensureFixtures creates the buyers and products on first use and tops the
// keys up to cover `need` more orders: spread over the order phases'
// products, or (all) over every product.
func ensureFixtures(ctx context.Context, e *benchEnv, s *stack, need int, all bool) error {
	own := s == nil
	if own {
		var done func()
		var err error
		if s, done, err = startWithSim(ctx, e, stackConfig{label: "fixtures", mysqlDSN: e.dsn, redisAddr: e.params.RedisAddr}); err != nil {
			return err
		}
		defer done()
	}
	c := e.client(s)
	var err error
	if e.fx == nil {
		if e.fx, err = createFixtures(ctx, c, e.params.Users, e.params.Products); err == nil {
			logf("fixtures: %d buyers, products %v (order phases use %d)", len(e.fx.tokens), e.fx.products, e.fx.used)
		}
	}
	if err == nil {
		products := e.fx.products[:e.fx.used]
		if all {
			products = e.fx.products
		}
		err = e.fx.topUp(ctx, c, e.db, products, (need+len(products)-1)/len(products)+10)
	}
	if own {
		if serr := s.stop(); err == nil {
			err = serr
		}
	}
	return err
}
