package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Client calls the API as one bearer (a buyer's token or the admin's).
type Client struct {
	Base  string
	Token string
}

// httpClient checks every exchange against the OpenAPI document.
var httpClient = HTTPClient(30 * time.Second)

// Do sends a request with an optional JSON body and headers, decodes a JSON
// answer into out (if not nil) and returns the status.
func (c *Client) Do(t testing.TB, method, path string, body any, out any, headers ...string) int {
	t.Helper()
	var raw []byte
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		raw = b
	}
	st, raw := c.Raw(t, method, path, raw, headers...)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %q: %v", method, path, raw, err)
		}
	}
	return st
}

// User is a buyer created through the admin API.
type User struct {
	ID    int64  `json:"id"`
	Token string `json:"token"`
}

// NewUser creates a buyer and returns a client acting as them.
func (s *Stack) NewUser(t testing.TB, name string, balance int64) (*User, *Client) {
	t.Helper()
	var u User
	if st := s.Admin.Do(t, "POST", "/api/v1/admin/users", map[string]any{"name": name, "balance_cents": balance}, &u); st != 201 {
		t.Fatalf("create user: status %d", st)
	}
	return &u, &Client{Base: s.APIURL, Token: u.Token}
}

// NewProduct creates a product and returns its ID.
func (s *Stack) NewProduct(t testing.TB, p map[string]any) int64 {
	t.Helper()
	var out struct{ ID int64 }
	if st := s.Admin.Do(t, "POST", "/api/v1/admin/products", p, &out); st != 201 {
		t.Fatalf("create product %v: status %d", p, st)
	}
	return out.ID
}

// NewCardProduct adds a card product named sku at price with keys fresh
// keys, their codes prefixed with the upper-cased sku.
func (s *Stack) NewCardProduct(t testing.TB, sku string, price int64, keys int) int64 {
	t.Helper()
	id := s.NewProduct(t, map[string]any{"sku": sku, "kind": "card", "price_cents": price})
	s.AddCards(t, id, strings.ToUpper(sku), keys)
	return id
}

// NewCardOrder adds a card product as NewCardProduct does, a buyer named
// after it, and the buyer's order of one key.
func (s *Stack) NewCardOrder(t testing.TB, sku string, price int64, keys int) (productID int64, buyer *Client, o OrderView) {
	t.Helper()
	productID = s.NewCardProduct(t, sku, price, keys)
	_, buyer = s.NewUser(t, sku, 0)
	return productID, buyer, buyer.CreateOrder(t, productID, 1)
}

// AddCards adds n keys with a prefix to a card product and returns the codes.
func (s *Stack) AddCards(t testing.TB, productID int64, prefix string, n int) []string {
	t.Helper()
	codes := make([]string, n)
	for i := range codes {
		codes[i] = fmt.Sprintf("%s-%05d", prefix, i)
	}
	if st := s.Admin.Do(t, "POST", fmt.Sprintf("/api/v1/admin/products/%d/cards", productID), map[string]any{"codes": codes}, nil); st != 201 {
		t.Fatalf("add cards: status %d", st)
	}
	return codes
}

// PayOrder has the simulator pay the order in full (tradeNo "" lets it
// pick the trade), failing the test unless orderflow answers 200; it
// returns the trade number.
func (s *Stack) PayOrder(t testing.TB, o OrderView, tradeNo string) string {
	t.Helper()
	trade, st, err := s.Pay.Pay(context.Background(), o.OrderNo, o.AmountCents, tradeNo)
	if err != nil || st != 200 {
		t.Fatalf("pay %s: status %d, err %v", o.OrderNo, st, err)
	}
	return trade
}

// Cancel cancels the buyer's order, failing the test unless 200.
func (c *Client) Cancel(t testing.TB, orderNo string) {
	t.Helper()
	if st := c.Do(t, "POST", "/api/v1/orders/"+orderNo+"/cancel", nil, nil); st != 200 {
		t.Fatalf("cancel %s: status %d", orderNo, st)
	}
}

// OrderView is the buyer's view of an order.
type OrderView struct {
	OrderNo     string   `json:"order_no"`
	UserID      int64    `json:"user_id"`
	Status      string   `json:"status"`
	AmountCents int64    `json:"amount_cents"`
	Quantity    int      `json:"quantity"`
	Cards       []string `json:"cards"`
	TradeNo     *string  `json:"trade_no"`
}

// CreateOrder creates an order as a buyer, failing the test unless 201.
func (c *Client) CreateOrder(t testing.TB, productID int64, qty int) OrderView {
	t.Helper()
	var o OrderView
	if st := c.Do(t, "POST", "/api/v1/orders", map[string]any{"product_id": productID, "quantity": qty}, &o); st != 201 {
		t.Fatalf("create order: status %d", st)
	}
	return o
}

// Order reads an order.
func (c *Client) Order(t testing.TB, orderNo string) OrderView {
	t.Helper()
	var o OrderView
	if st := c.Do(t, "GET", "/api/v1/orders/"+orderNo, nil, &o); st != 200 {
		t.Fatalf("get order %s: status %d", orderNo, st)
	}
	return o
}
