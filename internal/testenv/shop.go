package testenv

import (
	"context"
	"testing"

	"orderflow/internal/domain/catalog"
	"orderflow/internal/domain/order"
)

// Shop is a recharge product at one price and a buyer with no balance,
// made through the stack's use cases: what a domain test needs before it
// can take orders.
type Shop struct {
	s         *Stack
	ProductID int64
	BuyerID   int64
}

// NewShop makes the product (sku, priced and crediting cents) and the buyer.
func (s *Stack) NewShop(t testing.TB, sku string, cents int64) *Shop {
	t.Helper()
	ctx := context.Background()
	productID, err := s.UC.Catalog.CreateProduct(ctx, catalog.NewProduct{SKU: sku, Kind: "recharge", PriceCents: cents, CreditCents: cents})
	if err != nil {
		t.Fatal(err)
	}
	buyer, err := s.UC.Accounts.Create(ctx, "buyer", 0)
	if err != nil {
		t.Fatal(err)
	}
	return &Shop{s: s, ProductID: productID, BuyerID: buyer.ID}
}

// Order creates a pending order of one unit and returns its number.
func (sh *Shop) Order(t testing.TB) string {
	t.Helper()
	res, err := sh.s.UC.Orders.Create(context.Background(), order.CreateRequest{UserID: sh.BuyerID, ProductID: sh.ProductID, Quantity: 1})
	if err != nil {
		t.Fatal(err)
	}
	return res.Order.OrderNo
}
