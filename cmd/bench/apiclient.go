package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"orderflow/internal/infra/sign"
	"orderflow/internal/paysim"
)

// apiClient speaks orderflow's HTTP API the way a shop front end and the
// payment provider do.
type apiClient struct {
	base   string
	admin  string
	secret string
	hc     *http.Client
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

// apiError is a non-2xx answer.
type apiError struct {
	Status int
	Body   string
}

func (e *apiError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Status, e.Body) }

func (c *apiClient) do(ctx context.Context, method, path, bearer string, headers map[string]string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return &apiError{Status: resp.StatusCode, Body: string(b)}
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func (c *apiClient) createUser(ctx context.Context, name string, balance int64) (id int64, token string, err error) {
	var out struct {
		ID    int64  `json:"id"`
		Token string `json:"token"`
	}
	err = c.do(ctx, http.MethodPost, "/api/v1/admin/users", c.admin, nil, mustJSON(map[string]any{"name": name, "balance_cents": balance}), &out)
	return out.ID, out.Token, err
}

func (c *apiClient) createCardProduct(ctx context.Context, sku string, price int64) (int64, error) {
	var out struct {
		ID int64 `json:"id"`
	}
	err := c.do(ctx, http.MethodPost, "/api/v1/admin/products", c.admin, nil, mustJSON(map[string]any{"sku": sku, "kind": "card", "price_cents": price}), &out)
	return out.ID, err
}

func (c *apiClient) addCards(ctx context.Context, productID int64, codes []string) error {
	return c.do(ctx, http.MethodPost, fmt.Sprintf("/api/v1/admin/products/%d/cards", productID), c.admin, nil, mustJSON(map[string]any{"codes": codes}), nil)
}

// placed is a created order.
type placed struct {
	OrderNo     string    `json:"order_no"`
	AmountCents int64     `json:"amount_cents"`
	ExpireAt    time.Time `json:"expire_at"`
}

func (c *apiClient) createOrder(ctx context.Context, token string, productID int64) (placed, error) {
	var out placed
	err := c.do(ctx, http.MethodPost, "/api/v1/orders", token, nil, mustJSON(map[string]any{"product_id": productID, "quantity": 1}), &out)
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
	body := mustJSON(map[string]any{"order_no": o.OrderNo, "trade_no": trade, "amount_cents": o.AmountCents})
	return c.do(ctx, http.MethodPost, "/api/v1/payments/notify", "", map[string]string{sign.Header: sign.Sum(c.secret, body)}, body, nil)
}

func (c *apiClient) createGroup(ctx context.Context, ownerToken, title string, price int64, deadline time.Time) (string, error) {
	var out struct {
		GroupNo string `json:"group_no"`
	}
	err := c.do(ctx, http.MethodPost, "/api/v1/groups", ownerToken, nil,
		mustJSON(map[string]any{"title": title, "price_cents": price, "deadline": deadline.UTC().Format(time.RFC3339Nano)}), &out)
	return out.GroupNo, err
}

func (c *apiClient) joinGroup(ctx context.Context, token, groupNo string) error {
	return c.do(ctx, http.MethodPost, "/api/v1/groups/"+groupNo+"/join", token, nil, []byte("{}"), nil)
}
