package catalog_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"orderflow/internal/domain/bounds"
	"orderflow/internal/domain/catalog"
	"orderflow/internal/infra/stock"
	"orderflow/internal/testenv"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// shop is the catalog service on a fresh MariaDB database, its fake clock
// and a Redis DB of the test's own, with an admin in the context so the
// audit entries are written.
type shop struct {
	testenv.Base
	ctx context.Context
	svc *catalog.Service
	rdb *redis.Client
}

func newShop(t *testing.T) *shop {
	t.Helper()
	b, rdb := testenv.NewBase(t, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)), testenv.Redis(t)
	return &shop{Base: b, ctx: testenv.AdminContext(), rdb: rdb, svc: catalog.New(b.Store, rdb, b.Clock)}
}

func ptr(n int64) *int64 { return &n }

// A product is held to its kind and its bounds before anything is
// written: a refusal names its field; a second product with a taken sku is
// duplicate_sku. Only accepted products are written, each with its audit
// entry.
func TestCreateProduct(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	var written int64
	for _, c := range []struct {
		name string
		p    catalog.NewProduct
		code string // "" accepted
	}{
		{"a card product", catalog.NewProduct{SKU: "card", Kind: "card", PriceCents: 100}, ""},
		{"a free subscription of the longest days, limited", catalog.NewProduct{SKU: "sub", Kind: "subscription", Days: bounds.MaxDays, Stock: ptr(bounds.MaxStock)}, ""},
		{"a recharge of the largest credit and price", catalog.NewProduct{SKU: strings.Repeat("r", 64), Kind: "recharge", PriceCents: bounds.MaxCents, CreditCents: bounds.MaxCents}, ""},
		{"the taken sku", catalog.NewProduct{SKU: "card", Kind: "recharge", PriceCents: 1, CreditCents: 1}, "duplicate_sku"},
		{"no sku", catalog.NewProduct{Kind: "card", PriceCents: 1}, "invalid_sku"},
		{"a sku of 65", catalog.NewProduct{SKU: strings.Repeat("r", 65), Kind: "card", PriceCents: 1}, "invalid_sku"},
		{"an unknown kind", catalog.NewProduct{SKU: "x", Kind: "gift", PriceCents: 1}, "invalid_kind"},
		{"a card product with a stock", catalog.NewProduct{SKU: "x", Kind: "card", PriceCents: 1, Stock: ptr(5)}, "invalid_stock"},
		{"a negative price", catalog.NewProduct{SKU: "x", Kind: "card", PriceCents: -1}, "invalid_price"},
		{"a price past the bound", catalog.NewProduct{SKU: "x", Kind: "card", PriceCents: bounds.MaxCents + 1}, "invalid_price"},
		{"a subscription of no days", catalog.NewProduct{SKU: "x", Kind: "subscription", PriceCents: 1}, "invalid_days"},
		{"days past the bound on a kind that ignores them", catalog.NewProduct{SKU: "x", Kind: "card", PriceCents: 1, Days: bounds.MaxDays + 1}, "invalid_days"},
		{"a recharge of no credit", catalog.NewProduct{SKU: "x", Kind: "recharge", PriceCents: 1}, "invalid_credit"},
		{"a negative credit on a kind that ignores it", catalog.NewProduct{SKU: "x", Kind: "subscription", PriceCents: 1, Days: 1, CreditCents: -1}, "invalid_credit"},
		{"a stock past the bound", catalog.NewProduct{SKU: "x", Kind: "recharge", PriceCents: 1, CreditCents: 1, Stock: ptr(bounds.MaxStock + 1)}, "invalid_stock"},
		{"a negative stock", catalog.NewProduct{SKU: "x", Kind: "recharge", PriceCents: 1, CreditCents: 1, Stock: ptr(-1)}, "invalid_stock"},
	} {
		t.Run(c.name, func(t *testing.T) {
			id, err := s.svc.CreateProduct(s.ctx, c.p)
			if got := testenv.ErrCode(err); got != c.code {
				t.Fatalf("create: %v (code %q), want %q", err, got, c.code)
			}
			if c.code == "" {
				written++
				v, err := s.svc.Product(s.ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				want := &catalog.ProductView{ID: id, SKU: c.p.SKU, Kind: c.p.Kind, PriceCents: c.p.PriceCents, Days: int(c.p.Days), CreditCents: c.p.CreditCents, Stock: c.p.Stock}
				if c.p.Kind == "card" {
					want.Stock = ptr(0) // its keys, none yet
				}
				if diff := cmp.Diff(want, v); diff != "" {
					t.Errorf("product (-want +got):\n%s", diff)
				}
			}
			if n := testenv.Count(t, s.DB, `SELECT COUNT(*) FROM products`); n != written {
				t.Errorf("%d products, want %d", n, written)
			}
			if n := testenv.Count(t, s.DB, `SELECT COUNT(*) FROM audit_entries WHERE action = 'product_create'`); n != written {
				t.Errorf("%d audit entries, want %d", n, written)
			}
		})
	}
}

// Card keys go onto a card product only, 1..10000 trimmed codes of 1..255
// characters at a time, all or none: a code repeated in the batch or
// already held refuses the whole batch. An accepted batch drops the Redis
// stock counter, for the next take to rebuild from the ledger.
func TestAddCards(t *testing.T) {
	t.Parallel()
	s := newShop(t)
	card, err := s.svc.CreateProduct(s.ctx, catalog.NewProduct{SKU: "card", Kind: "card", PriceCents: 100})
	if err != nil {
		t.Fatal(err)
	}
	recharge, err := s.svc.CreateProduct(s.ctx, catalog.NewProduct{SKU: "recharge", Kind: "recharge", PriceCents: 100, CreditCents: 100})
	if err != nil {
		t.Fatal(err)
	}
	many := make([]string, 10001)
	for i := range many {
		many[i] = "M" + strconv.Itoa(i)
	}
	var keys int64
	for _, c := range []struct {
		name    string
		product int64
		codes   []string
		code    string // "" accepted
	}{
		{"two codes, trimmed", card, []string{" A1 ", "A2"}, ""},
		{"a code of 255", card, []string{strings.Repeat("c", 255)}, ""},
		{"an unknown product", card + 100, []string{"B1"}, "product_not_found"},
		{"not a card product", recharge, []string{"B1"}, "not_a_card_product"},
		{"no codes", card, nil, "invalid_codes"},
		{"10001 codes", card, many, "invalid_codes"},
		{"an empty code among good ones", card, []string{"B1", "  "}, "invalid_codes"},
		{"a code of 256", card, []string{"B1", strings.Repeat("c", 256)}, "invalid_codes"},
		{"a code twice in the batch (once padded)", card, []string{"B1", "B2", " B1"}, "duplicate_code"},
		{"a code already held", card, []string{"B1", "A1"}, "duplicate_code"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := s.rdb.Set(s.ctx, stock.Key(card), 99, 0).Err(); err != nil {
				t.Fatal(err)
			}
			n, err := s.svc.AddCards(s.ctx, c.product, c.codes)
			if got := testenv.ErrCode(err); got != c.code {
				t.Fatalf("add: %v (code %q), want %q", err, got, c.code)
			}
			if c.code == "" {
				keys += int64(len(c.codes))
				if n != len(c.codes) {
					t.Errorf("added %d, want %d", n, len(c.codes))
				}
			}
			if got := testenv.Count(t, s.DB, `SELECT COUNT(*) FROM card_keys`); got != keys {
				t.Errorf("%d keys, want %d", got, keys)
			}
			v, err := s.svc.Product(s.ctx, card)
			if err != nil || v.Stock == nil || *v.Stock != keys {
				t.Errorf("card product's stock %v, %v; want %d", v.Stock, err, keys)
			}
			counter := s.rdb.Exists(s.ctx, stock.Key(card)).Val() == 1
			if want := c.code != ""; counter != want {
				t.Errorf("stock counter kept: %v, want %v", counter, want)
			}
		})
	}
	if n := testenv.Count(t, s.DB, `SELECT COUNT(*) FROM card_keys WHERE code = 'A1'`); n != 1 {
		t.Errorf("the padded code was not stored trimmed")
	}
}
