package devmode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"orderflow/internal/domain/group"
	"orderflow/internal/domain/order"
	"orderflow/internal/jsonhttp"
	"orderflow/internal/paysim"
)

// DemoOrderTTL is how long the demo's orders wait for payment, so the story
// shows a close without a quarter of an hour's wait.
const DemoOrderTTL = 4 * time.Second

// demo drives the story through a running system's HTTP API.
type demo struct {
	api    *client
	pay    *paysim.Client
	admin  string
	buyer  string
	seeded *Seeded
	out    io.Writer
	// unpaidDone closes when the left-unpaid step is over: the late-payment
	// step reads the card stock after it, so the other pending order's
	// key is not counted as locked or not depending on which closed first.
	unpaidDone chan struct{}
}

// RunDemo tells a short story through the running system s — its order TTL
// should be DemoOrderTTL — and prints what happened: an order paid and
// delivered, a wallet top-up, an order left unpaid that closes and recycles
// its key, one paid after it closed and refunded, and a group-buy settled.
func RunDemo(ctx context.Context, s *System, out io.Writer) error {
	if s.Seeded == nil {
		return fmt.Errorf("demo: the system has no demo catalogue (start it on a new data directory)")
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	d := &demo{
		api:   &client{api: jsonhttp.Client{Base: s.APIURL, HTTP: hc}},
		pay:   &paysim.Client{BaseURL: s.PaysimURL, Secret: s.Config.PaySecret, HTTP: hc},
		admin: s.AdminToken, buyer: s.Seeded.BuyerToken, seeded: s.Seeded, out: out,
		unpaidDone: make(chan struct{}),
	}
	// The unpaid order, the late payment and the group-buy wait on clocks;
	// they run side by side with the quick ones.
	steps := []struct {
		name string
		run  func(context.Context) (string, error)
	}{
		{"paid and delivered", d.paidAndDelivered}, {"wallet top-up", d.topUp}, {"left unpaid", d.leftUnpaid},
		{"paid after closing", d.paidLate}, {"group-buy", d.groupBuy},
	}
	lines, errs := make([]string, len(steps)), make([]error, len(steps))
	var wg sync.WaitGroup
	for i, step := range steps {
		wg.Go(func() {
			if lines[i], errs[i] = step.run(ctx); errs[i] != nil {
				lines[i], errs[i] = "failed: "+errs[i].Error(), fmt.Errorf("%s: %w", step.name, errs[i])
			}
		})
	}
	wg.Wait()
	for i, l := range lines {
		fmt.Fprintf(out, "%d. %-20s %s\n", i+1, steps[i].name, l)
	}
	return errors.Join(errs...)
}

func (d *demo) create(ctx context.Context, productID int64) (*order.View, error) {
	var o order.View
	err := d.api.call(ctx, "POST", "/api/v1/orders", d.buyer, map[string]any{"product_id": productID, "quantity": 1}, &o)
	return &o, err
}

// await polls an order (as the admin, with its history) until cond holds.
func (d *demo) await(ctx context.Context, orderNo string, within time.Duration, cond func(*order.AdminView) bool) (*order.AdminView, error) {
	deadline := time.Now().Add(within)
	for {
		var o order.AdminView
		if err := d.api.call(ctx, "GET", "/api/v1/admin/orders/"+orderNo, d.admin, nil, &o); err != nil {
			return nil, err
		}
		if cond(&o) {
			return &o, nil
		}
		if time.Now().After(deadline) {
			return &o, fmt.Errorf("order %s still %s after %v", orderNo, o.Status, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func status(want string) func(*order.AdminView) bool {
	return func(o *order.AdminView) bool { return o.Status == want }
}

// history is "pending → paid → claimed → finished".
func history(o *order.AdminView) string {
	steps := []string{}
	for _, e := range o.Events {
		steps = append(steps, e.ToStatus)
	}
	return strings.Join(steps, " → ")
}

func (d *demo) paidAndDelivered(ctx context.Context) (string, error) {
	o, err := d.create(ctx, d.seeded.CardProductID)
	if err != nil {
		return "", err
	}
	if _, _, err := d.pay.Pay(ctx, o.OrderNo, o.AmountCents, ""); err != nil {
		return "", err
	}
	f, err := d.await(ctx, o.OrderNo, 10*time.Second, status("finished"))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s  %s; paid→finished %v; key %v",
		o.OrderNo, history(f), f.FinishedAt.Sub(*f.PaidAt).Round(time.Millisecond), f.Cards), nil
}

// balance is the seeded buyer's wallet, as the admin API shows it.
func (d *demo) balance(ctx context.Context) (int64, error) {
	return d.adminCount(ctx, fmt.Sprintf("/api/v1/admin/users/%d", d.seeded.BuyerID), "balance_cents")
}

func (d *demo) topUp(ctx context.Context) (string, error) {
	before, err := d.balance(ctx)
	if err != nil {
		return "", err
	}
	o, err := d.create(ctx, d.seeded.RechargeProductID)
	if err == nil {
		_, _, err = d.pay.Pay(ctx, o.OrderNo, o.AmountCents, "")
	}
	if err == nil {
		_, err = d.await(ctx, o.OrderNo, 10*time.Second, status("finished"))
	}
	if err != nil {
		return "", err
	}
	after, err := d.balance(ctx)
	return fmt.Sprintf("%s  finished; the buyer's wallet %d → %d cents", o.OrderNo, before, after), err
}

// stock is the seeded card product's stock, as the admin API shows it.
func (d *demo) stock(ctx context.Context) (int64, error) {
	return d.adminCount(ctx, fmt.Sprintf("/api/v1/admin/products/%d", d.seeded.CardProductID), "stock")
}

// adminCount reads one whole-number field of an admin API object.
func (d *demo) adminCount(ctx context.Context, path, field string) (int64, error) {
	var obj map[string]json.RawMessage
	if err := d.api.call(ctx, "GET", path, d.admin, nil, &obj); err != nil {
		return 0, err
	}
	var n int64
	if err := json.Unmarshal(obj[field], &n); err != nil {
		return 0, fmt.Errorf("GET %s: field %s: %w", path, field, err)
	}
	return n, nil
}

func (d *demo) leftUnpaid(ctx context.Context) (string, error) {
	defer close(d.unpaidDone)
	o, err := d.create(ctx, d.seeded.CardProductID)
	if err != nil {
		return "", err
	}
	c, err := d.await(ctx, o.OrderNo, DemoOrderTTL+10*time.Second, status("closed"))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s  %s %v after its expiry; its key went back on sale",
		o.OrderNo, history(c), c.ClosedAt.Sub(c.ExpireAt).Round(time.Millisecond)), nil
}

func (d *demo) paidLate(ctx context.Context) (string, error) {
	o, err := d.create(ctx, d.seeded.CardProductID)
	if err != nil {
		return "", err
	}
	if _, err = d.await(ctx, o.OrderNo, DemoOrderTTL+10*time.Second, status("closed")); err != nil {
		return "", err
	}
	trade, code, err := d.pay.Pay(ctx, o.OrderNo, o.AmountCents, "")
	if err != nil {
		return "", err
	}
	r, err := d.await(ctx, o.OrderNo, 15*time.Second, func(v *order.AdminView) bool {
		return len(v.Refunds) == 1 && v.Refunds[0].Status == "succeeded"
	})
	if err != nil {
		return "", err
	}
	select {
	case <-d.unpaidDone:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	stock, err := d.stock(ctx)
	return fmt.Sprintf("%s  closed, then trade %s arrived (answered %d): recorded, not delivered; refund %s %s for %d cents; card stock now %d",
		o.OrderNo, trade, code, r.Refunds[0].RefundNo, r.Refunds[0].Status, r.Refunds[0].AmountCents, stock), err
}

func (d *demo) groupBuy(ctx context.Context) (string, error) {
	deadline := time.Now().Add(3 * time.Second).Truncate(time.Second).Add(time.Second)
	var g group.View
	if err := d.api.call(ctx, "POST", "/api/v1/groups", d.buyer, map[string]any{
		"title": "Demo: a year of VIP", "price_cents": 2500, "deadline": deadline.Format(time.RFC3339),
	}, &g); err != nil {
		return "", err
	}
	for _, name := range []string{"alice", "bob", "carol"} {
		var u struct {
			Token string `json:"token"`
		}
		if err := d.api.call(ctx, "POST", "/api/v1/admin/users", d.admin, map[string]any{"name": name, "balance_cents": 10000}, &u); err != nil {
			return "", err
		}
		if err := d.api.call(ctx, "POST", "/api/v1/groups/"+g.GroupNo+"/join", u.Token, nil, nil); err != nil {
			return "", err
		}
	}
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if err := d.api.call(ctx, "GET", "/api/v1/groups/"+g.GroupNo, d.buyer, nil, &g); err != nil {
			return "", err
		}
		if g.Status == "settled" {
			break
		}
		if time.Now().After(end) {
			return "", fmt.Errorf("group %s still %s", g.GroupNo, g.Status)
		}
	}
	charged := 0
	for _, p := range g.Participants {
		if p.Charged {
			charged++
		}
	}
	return fmt.Sprintf("%s  %d joined; settled at its deadline, %d charged %d cents each from their wallets",
		g.GroupNo, len(g.Participants), charged, g.PriceCents), nil
}
