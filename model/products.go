package model

import (
	"context"
	"time"

	"orderflow/model/sqlexec"
)

// Product is something a buyer can order.
type Product struct {
	ID          int64
	SKU         string `gorm:"column:sku"`
	Kind        ProductKind
	PriceCents  int64
	Days        int
	CreditCents int64
	Stock       *int64
	CreatedAt   time.Time
}

// InsertProduct creates a product and sets its ID.
func (s *Store) InsertProduct(ctx context.Context, p *Product) error {
	return s.InTx(ctx, func(tx *Store) error {
		id, err := tx.insert(ctx,
			`INSERT INTO products (sku, kind, price_cents, days, credit_cents, stock, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			p.SKU, p.Kind, p.PriceCents, p.Days, p.CreditCents, p.Stock, p.CreatedAt)
		p.ID = id
		return err
	})
}

// ProductByID loads one product.
func (s *Store) ProductByID(ctx context.Context, id int64) (*Product, error) {
	return rowOf[Product](ctx, s, `SELECT * FROM products WHERE id = ?`, id)
}

// TakeProductStock decrements a limited non-card product's stock by qty if
// enough is left. (Unlimited products have no stock to take: callers skip it.)
func (s *Store) TakeProductStock(ctx context.Context, productID int64, qty int) (bool, error) {
	n, err := s.exec(ctx, `UPDATE products SET stock = stock - ? WHERE id = ? AND stock IS NOT NULL AND stock >= ?`, qty, productID, qty)
	return n == 1, err
}

// ReturnProductStockLater gives qty back to a limited non-card product,
// held for the commit (batch.go).
func (s *Store) ReturnProductStockLater(ctx context.Context, productID int64, qty int) error {
	return s.later(ctx, `UPDATE products SET stock = stock + ? WHERE id = ? AND stock IS NOT NULL`, qty, productID)
}

// SellableStock is the database's truth for a product's stock: for a card
// product its UNSOLD + RECYCLED keys, otherwise its stock column (-1 = unlimited).
func (s *Store) SellableStock(ctx context.Context, p *Product) (int64, error) {
	if p.Kind != KindCard {
		var row struct{ Stock *int64 }
		if err := s.first(ctx, &row, `SELECT stock FROM products WHERE id = ?`, p.ID); err != nil {
			return 0, err
		}
		if row.Stock == nil {
			return -1, nil
		}
		return *row.Stock, nil
	}
	return valueOf[int64](ctx, s, `SELECT COUNT(*) FROM card_keys WHERE product_id = ? AND status IN ('UNSOLD', 'RECYCLED')`, p.ID)
}

// RestoreFlow names a committed stock restore (close or refund restore).
type RestoreFlow struct {
	OrderNo  string
	FlowType FlowKind
}

// StockSnapshot is what a counter rebuild needs: the sellable count and the
// restore flows committed since `since`, read in ONE consistent snapshot (a
// read-only REPEATABLE READ transaction; on SQLite a read transaction is a
// snapshot in WAL mode), so every listed restore is in the
// count and every counted restore is listed.
func (s *Store) StockSnapshot(ctx context.Context, p *Product, since time.Time) (int64, []RestoreFlow, error) {
	var n int64
	var flows []RestoreFlow
	err := s.x.Snapshot(ctx, func(x *sqlexec.Session) error {
		ts := s.on(x)
		if err := ts.all(ctx, &flows,
			`SELECT o.order_no, f.flow_type FROM stock_flows f JOIN orders o ON o.id = f.order_id
			 WHERE f.product_id = ? AND f.flow_type IN (?, ?) AND f.created_at >= ?`,
			p.ID, FlowCloseRestore, FlowRefundRestore, since); err != nil {
			return err
		}
		var err error
		n, err = ts.SellableStock(ctx, p)
		return err
	})
	return n, flows, err
}

// LimitedProductIDs lists products whose stock is tracked (cards and limited others).
func (s *Store) LimitedProductIDs(ctx context.Context) ([]int64, error) {
	return rowsOf[int64](ctx, s, `SELECT id FROM products WHERE kind = 'card' OR stock IS NOT NULL ORDER BY id`)
}

// LimitedProductsAfter pages the products whose stock is tracked, by id.
func (s *Store) LimitedProductsAfter(ctx context.Context, afterID int64, limit int) ([]Product, error) {
	return rowsOf[Product](ctx, s, `SELECT * FROM products WHERE (kind = 'card' OR stock IS NOT NULL) AND id > ? ORDER BY id LIMIT ?`, afterID, limit)
}
