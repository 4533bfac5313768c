// Package catalog manages products and their card keys.
package catalog

import (
	"context"
	"fmt"
	"strings"

	"orderflow/internal/domain/apperr"
	"orderflow/internal/domain/bounds"
	"orderflow/internal/domain/trail"
	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/stock"
	"orderflow/model"

	"github.com/redis/go-redis/v9"
)

// Service runs the catalog use cases.
type Service struct {
	store *model.Store
	rdb   redis.UniversalClient
	clock clock.Clock
}

// New returns the catalog service.
func New(store *model.Store, rdb redis.UniversalClient, c clock.Clock) *Service {
	return &Service{store: store, rdb: rdb, clock: c}
}

// Errors.
var (
	ErrNotFound     = apperr.New(apperr.NotFound, "product_not_found", "no such product")
	ErrDuplicateSKU = apperr.New(apperr.Conflict, "duplicate_sku", "a product with this sku exists")
	ErrDuplicateKey = apperr.New(apperr.Conflict, "duplicate_code", "a card code in this batch already exists")
	ErrNotCard      = apperr.New(apperr.Invalid, "not_a_card_product", "card keys can only be added to a card product")
)

func invalid(code, msg string) error { return apperr.New(apperr.Invalid, code, msg) }

// NewProduct is the admin's product definition.
type NewProduct struct {
	SKU         string `json:"sku"`
	Kind        string `json:"kind"`
	PriceCents  int64  `json:"price_cents"`
	Days        int64  `json:"days"`
	CreditCents int64  `json:"credit_cents"`
	Stock       *int64 `json:"stock"`
}

// CreateProduct validates and stores a product.
func (s *Service) CreateProduct(ctx context.Context, np NewProduct) (int64, error) {
	kind := model.ProductKind(np.Kind)
	switch {
	case np.SKU == "" || len(np.SKU) > 64:
		return 0, invalid("invalid_sku", "sku must be 1..64 characters")
	case !kind.Valid():
		return 0, invalid("invalid_kind", "kind must be card, subscription or recharge")
	case kind == model.KindCard && np.Stock != nil:
		return 0, invalid("invalid_stock", "a card product's stock is its keys; add keys instead")
	}
	if err := checkProduct(kind, np); err != nil {
		return 0, err
	}
	p := &model.Product{SKU: np.SKU, Kind: kind, PriceCents: np.PriceCents, Days: int(np.Days), CreditCents: np.CreditCents, Stock: np.Stock, CreatedAt: s.clock.Now()}
	err := s.store.InTx(ctx, func(tx *model.Store) error {
		if err := tx.InsertProduct(ctx, p); err != nil {
			return err
		}
		return trail.Record(ctx, tx, p.CreatedAt, trail.ProductCreate, trail.ProductObject(p.ID), trail.Detail{
			"sku": p.SKU, "kind": string(p.Kind), "price_cents": p.PriceCents,
		})
	})
	if err != nil {
		if model.IsDuplicate(err) {
			return 0, ErrDuplicateSKU
		}
		return 0, fmt.Errorf("create product %s: %w", np.SKU, err)
	}
	return p.ID, nil
}

// checkProduct holds a product's numbers to the bounds (model/bounds.go):
// its price; its days if a subscription, its credit if a recharge (each
// also bounded when given to a kind that ignores it, so no value can
// overflow its column); its stock when limited.
func checkProduct(kind model.ProductKind, np NewProduct) error {
	if err := bounds.CheckPrice(np.PriceCents); err != nil {
		return err
	}
	if kind == model.KindSubscription || np.Days != 0 {
		if err := bounds.CheckDays(np.Days); err != nil {
			return err
		}
	}
	if kind == model.KindRecharge || np.CreditCents != 0 {
		if err := bounds.CheckCredit(np.CreditCents); err != nil {
			return err
		}
	}
	if np.Stock != nil {
		return bounds.CheckStock(*np.Stock)
	}
	return nil
}

// AddCards adds UNSOLD keys to a card product, all or none.
func (s *Service) AddCards(ctx context.Context, productID int64, codes []string) (int, error) {
	p, err := s.product(ctx, productID)
	if err != nil {
		return 0, err
	}
	if p.Kind != model.KindCard {
		return 0, ErrNotCard
	}
	if len(codes) == 0 || len(codes) > 10000 {
		return 0, invalid("invalid_codes", "codes must hold 1..10000 entries")
	}
	seen := make(map[string]bool, len(codes))
	for i, c := range codes {
		c = strings.TrimSpace(c)
		if c == "" || len(c) > 255 {
			return 0, invalid("invalid_codes", fmt.Sprintf("code #%d is empty or longer than 255 characters", i+1))
		}
		if seen[c] {
			return 0, ErrDuplicateKey
		}
		seen[c] = true
		codes[i] = c
	}
	now := s.clock.Now()
	err = s.store.InTx(ctx, func(tx *model.Store) error {
		if err := tx.InsertCards(ctx, productID, codes, now); err != nil {
			return err
		}
		return trail.Record(ctx, tx, now, trail.CardsAdd, trail.ProductObject(productID), trail.Detail{"added": len(codes)})
	})
	if err != nil {
		if model.IsDuplicate(err) {
			return 0, ErrDuplicateKey
		}
		return 0, fmt.Errorf("add cards to product %d: %w", productID, err)
	}
	// Drop the counter rather than adjust it: the next take rebuilds it from
	// the database, which already counts the new keys.
	_ = s.rdb.Del(ctx, stock.Key(productID)).Err()
	return len(codes), nil
}

// ProductView is a product as the admin API shows it; Stock is nil when unlimited.
type ProductView struct {
	ID          int64  `json:"id"`
	SKU         string `json:"sku"`
	Kind        string `json:"kind"`
	PriceCents  int64  `json:"price_cents"`
	Days        int    `json:"days,omitempty"`
	CreditCents int64  `json:"credit_cents,omitempty"`
	Stock       *int64 `json:"stock"`
}

// Product returns a product with its stock from the ledger.
func (s *Service) Product(ctx context.Context, id int64) (*ProductView, error) {
	p, err := s.product(ctx, id)
	if err != nil {
		return nil, err
	}
	n, err := s.store.SellableStock(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("product %d stock: %w", id, err)
	}
	v := &ProductView{ID: p.ID, SKU: p.SKU, Kind: string(p.Kind), PriceCents: p.PriceCents, Days: p.Days, CreditCents: p.CreditCents}
	if n >= 0 {
		v.Stock = &n
	}
	return v, nil
}

func (s *Service) product(ctx context.Context, id int64) (*model.Product, error) {
	p, err := s.store.ProductByID(ctx, id)
	return model.Found(p, err, ErrNotFound, "load product %d", id)
}
