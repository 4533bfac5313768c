package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"orderflow/internal/infra/sign"
	"orderflow/internal/jsonhttp"
	"orderflow/internal/paysim"
)

// apiClient speaks orderflow's HTTP API the way a shop front end and the
// payment provider do.
type apiClient struct {
	api    jsonhttp.Client
	admin  string
	secret string
	// sim, when set, pays through the simulator (it signs and sends the notify).
	sim *paysim.Client
}

func newHTTPClient() *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		// Keep-alive for every concurrent client: the default of 2 idle
		// connections per host would measure TCP handshakes, not orderflow.
		Transport: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, MaxConnsPerHost: 0, IdleConnTimeout: time.Minute},
	}
}

// post sends body to path with the bearer token and decodes a 2xx answer
// into out (when not nil); any other answer is a *jsonhttp.StatusError.
func (c *apiClient) post(ctx context.Context, path, bearer string, body, out any) error {
	return c.api.Call(ctx, jsonhttp.Request{Method: http.MethodPost, Path: path, Bearer: bearer, Body: body}, out)
}

func (c *apiClient) createUser(ctx context.Context, name string, balance int64) (id int64, token string, err error) {
	var out struct {
		ID    int64  `json:"id"`
		Token string `json:"token"`
	}
	err = c.post(ctx, "/api/v1/admin/users", c.admin, map[string]any{"name": name, "balance_cents": balance}, &out)
	return out.ID, out.Token, err
}

func (c *apiClient) createCardProduct(ctx context.Context, sku string, price int64) (int64, error) {
	var out struct {
		ID int64 `json:"id"`
	}
	err := c.post(ctx, "/api/v1/admin/products", c.admin, map[string]any{"sku": sku, "kind": "card", "price_cents": price}, &out)
	return out.ID, err
}

func (c *apiClient) addCards(ctx context.Context, productID int64, codes []string) error {
	return c.post(ctx, fmt.Sprintf("/api/v1/admin/products/%d/cards", productID), c.admin, map[string]any{"codes": codes}, nil)
}

// placed is a created order.
type placed struct {
	OrderNo     string    `json:"order_no"`
	AmountCents int64     `json:"amount_cents"`
	ExpireAt    time.Time `json:"expire_at"`
}

func (c *apiClient) createOrder(ctx context.Context, token string, productID int64) (placed, error) {
	var out placed
	err := c.post(ctx, "/api/v1/orders", token, map[string]any{"product_id": productID, "quantity": 1}, &out)
	return out, err
}

// pay sends the provider's payment notification for an order: signed
// directly by the bench, or through the simulator.
func (c *apiClient) pay(ctx context.Context, o placed) error {
	trade := "BT" + randHex(12)
	if c.sim != nil {
		_, status, err := c.sim.Pay(ctx, o.OrderNo, o.AmountCents, trade)
		if err == nil && status != http.StatusOK {
			err = fmt.Errorf("orderflow answered the simulator's notify with %d", status)
		}
		return err
	}
	body, err := json.Marshal(map[string]any{"order_no": o.OrderNo, "trade_no": trade, "amount_cents": o.AmountCents})
	if err != nil {
		return err
	}
	return c.api.Call(ctx, jsonhttp.Request{Method: http.MethodPost, Path: "/api/v1/payments/notify",
		Header: map[string]string{sign.Header: sign.Sum(c.secret, body)}, Body: json.RawMessage(body)}, nil)
}

func (c *apiClient) createGroup(ctx context.Context, ownerToken, title string, price int64, deadline time.Time) (string, error) {
	var out struct {
		GroupNo string `json:"group_no"`
	}
	err := c.post(ctx, "/api/v1/groups", ownerToken,
		map[string]any{"title": title, "price_cents": price, "deadline": deadline.UTC().Format(time.RFC3339Nano)}, &out)
	return out.GroupNo, err
}

func (c *apiClient) joinGroup(ctx context.Context, token, groupNo string) error {
	return c.post(ctx, "/api/v1/groups/"+groupNo+"/join", token, json.RawMessage("{}"), nil)
}
