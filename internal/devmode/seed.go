package devmode

import (
	"context"
	"fmt"
	"time"

	"orderflow/internal/domain/catalog"
	"orderflow/svc"
)

// Seeded is the demo catalogue a new dev ledger starts with.
type Seeded struct {
	CardProductID         int64  `json:"card_product_id"`
	SubscriptionProductID int64  `json:"subscription_product_id"`
	RechargeProductID     int64  `json:"recharge_product_id"`
	BuyerID               int64  `json:"buyer_id"`
	BuyerToken            string `json:"buyer_token"`
	GroupNo               string `json:"group_no"`
}

// seedCards is how many keys the demo card product starts with.
const seedCards = 20

// seed fills a new ledger through the same use cases the admin API calls: a
// card product with keys, a 30-day subscription, a wallet top-up, a buyer
// with money and an open group-buy the buyer owns.
func seed(ctx context.Context, uc *svc.UseCases, now time.Time) (*Seeded, error) {
	var s Seeded
	var err error
	if s.CardProductID, err = uc.Catalog.CreateProduct(ctx, catalog.NewProduct{SKU: "demo-steam-50", Kind: "card", PriceCents: 5000}); err != nil {
		return nil, err
	}
	codes := make([]string, seedCards)
	for i := range codes {
		codes[i] = fmt.Sprintf("DEMO-STEAM-%04d", i+1)
	}
	if _, err = uc.Catalog.AddCards(ctx, s.CardProductID, codes); err != nil {
		return nil, err
	}
	if s.SubscriptionProductID, err = uc.Catalog.CreateProduct(ctx, catalog.NewProduct{SKU: "demo-vip-30d", Kind: "subscription", PriceCents: 1500, Days: 30}); err != nil {
		return nil, err
	}
	if s.RechargeProductID, err = uc.Catalog.CreateProduct(ctx, catalog.NewProduct{SKU: "demo-topup-100", Kind: "recharge", PriceCents: 10000, CreditCents: 10000}); err != nil {
		return nil, err
	}
	buyer, err := uc.Accounts.Create(ctx, "demo-buyer", 50000)
	if err != nil {
		return nil, err
	}
	s.BuyerID, s.BuyerToken = buyer.ID, buyer.Token
	g, err := uc.Groups.Create(ctx, buyer.ID, "Demo group-buy: 3 months of VIP", 990, now.Add(time.Hour).Truncate(time.Second))
	if err != nil {
		return nil, err
	}
	s.GroupNo = g.GroupNo
	return &s, nil
}
