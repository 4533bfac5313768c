package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// The group-buy story and the operator's moves (refunds, manual payments) that
// the chaos clients play beside the buyers, and how a refusal is named.

// groupBuy opens a group with a deadline a few seconds away and has members
// join; short adds a member with an empty wallet.
func (w *workload) groupBuy(ctx context.Context, rng *rand.Rand, short bool) error {
	owner := w.buyers[rng.IntN(len(w.buyers))]
	deadline := time.Now().Add(time.Duration(2500+rng.IntN(3000)) * time.Millisecond).UTC()
	price := int64(300 + rng.IntN(7)*100)
	var g struct {
		GroupNo string `json:"group_no"`
	}
	err := retry(ctx, 10*time.Second, func() (bool, error) {
		a, err := w.http.do(ctx, "POST", w.c.apiURLs[0]+"/api/v1/groups", owner.token,
			map[string]any{"title": "chaos group", "price_cents": price, "deadline": deadline.Format(time.RFC3339Nano)})
		if a.transient(err) {
			return false, fmt.Errorf("create group: %d %v", a.status, err)
		}
		if a.status != 201 {
			return false, finalf("create group: %d %s", a.status, a.body)
		}
		return true, decodeInto(a, &g)
	})
	if err != nil {
		return err
	}
	w.hist.mu.Lock()
	w.hist.groups[g.GroupNo] = true
	w.hist.mu.Unlock()
	members := map[int64]buyer{}
	for len(members) < 2+rng.IntN(3) {
		b := w.buyers[rng.IntN(len(w.buyers))]
		if b.id != owner.id {
			members[b.id] = b
		}
	}
	if short {
		p := w.poor[rng.IntN(len(w.poor))]
		members[p.id] = p
	}
	joined := 0
	for _, id := range sortedIDs(members) {
		m := members[id]
		err := retry(ctx, time.Until(deadline), func() (bool, error) {
			a, err := w.http.do(ctx, "POST", w.c.apiURLs[0]+"/api/v1/groups/"+g.GroupNo+"/join", m.token, nil)
			if a.transient(err) {
				return false, fmt.Errorf("join: %d %v", a.status, err)
			}
			switch {
			case a.status == 200:
				w.hist.mu.Lock()
				w.hist.joins[g.GroupNo] = append(w.hist.joins[g.GroupNo], m.id)
				w.hist.mu.Unlock()
				return true, nil
			case a.status == 409 && containsCode(a.body, "already_joined"):
				return true, nil // an earlier try got in; its answer was lost
			}
			return false, finalf("join: %d %s", a.status, a.body)
		})
		if err == nil {
			joined++
		}
	}
	if joined == 0 {
		return fmt.Errorf("group %s: nobody could join", g.GroupNo)
	}
	if !short && rng.IntN(3) == 0 {
		// A late joiner racing the close: refused (409) or in and charged, never in and uncharged.
		late := w.buyers[rng.IntN(len(w.buyers))]
		sleep(ctx, time.Until(deadline.Add(time.Duration(rng.IntN(400)-250)*time.Millisecond)))
		a, err := w.http.do(ctx, "POST", w.c.apiURLs[0]+"/api/v1/groups/"+g.GroupNo+"/join", late.token, nil)
		if err == nil && a.status == 200 {
			w.hist.mu.Lock()
			w.hist.joins[g.GroupNo] = append(w.hist.joins[g.GroupNo], late.id)
			w.hist.mu.Unlock()
		}
	}
	return nil
}

func containsCode(body []byte, code string) bool {
	return strings.Contains(string(body), `"code":"`+code+`"`)
}

func sortedIDs(m map[int64]buyer) []int64 {
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// operate is the on-call operator: it retries refunds handed to manual and
// orders that ran out of activation attempts, once everything works again.
func (w *workload) operate(ctx context.Context) {
	var refunds struct {
		Refunds []struct {
			RefundNo string `json:"refund_no"`
		} `json:"refunds"`
	}
	a, err := w.http.do(ctx, "GET", w.c.apiURLs[0]+"/api/v1/admin/refunds?status=manual&limit=500", w.c.adminToken, nil)
	if err == nil && a.status == 200 && decodeInto(a, &refunds) == nil {
		for _, r := range refunds.Refunds {
			a, err := w.http.do(ctx, "POST", w.c.apiURLs[0]+"/api/v1/admin/refunds/"+r.RefundNo+"/retry", w.c.adminToken, nil)
			switch {
			case err == nil && a.status == 200:
				w.countOperator("refund retried")
			case err == nil && a.status == 409 && containsCode(a.body, "manual_payment"):
				// Manual money: no provider can return it; the operator
				// hands it back and says so.
				a, err := w.http.do(ctx, "POST", w.c.apiURLs[0]+"/api/v1/admin/refunds/"+r.RefundNo+"/resolve", w.c.adminToken,
					map[string]any{"note": "chaos: transferred back"})
				if err == nil && a.status == 200 {
					w.countOperator("manual payment's refund resolved")
				}
			}
		}
	}
	for drained := false; !drained; {
		select {
		case no := <-w.c.groupRetries:
			a, err := w.http.do(ctx, "POST", w.c.apiURLs[0]+"/api/v1/admin/groups/"+no+"/retry", w.c.adminToken, nil)
			switch {
			case err == nil && a.status == 200:
				w.countOperator("exhausted group retried")
			case err != nil || a.status >= 500:
				w.c.groupRetries <- no // try again next round
				drained = true
			}
		default:
			drained = true
		}
	}
	var orders struct {
		Orders []struct {
			OrderNo string `json:"order_no"`
		} `json:"orders"`
	}
	a, err = w.http.do(ctx, "GET", w.c.apiURLs[0]+"/api/v1/admin/orders?status=failed&limit=500", w.c.adminToken, nil)
	if err == nil && a.status == 200 && decodeInto(a, &orders) == nil {
		for _, o := range orders.Orders {
			// Half the failed orders are refunded, half retried; a refund of
			// an order whose effect was applied is refused (409), so retry it.
			if w.flip.Add(1)%2 == 1 {
				a, err := w.http.do(ctx, "POST", w.c.apiURLs[0]+"/api/v1/admin/orders/"+o.OrderNo+"/refund", w.c.adminToken, nil)
				if err == nil && a.status == 200 {
					w.countOperator("failed order refunded")
					continue
				}
				if err != nil || a.status != 409 {
					continue
				}
			}
			a, err := w.http.do(ctx, "POST", w.c.apiURLs[0]+"/api/v1/admin/orders/"+o.OrderNo+"/retry", w.c.adminToken, nil)
			if err == nil && a.status == 200 {
				w.countOperator("failed order retried")
			}
		}
	}
}

func (w *workload) countOperator(what string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.operator[what]++
}

// refusalReason condenses a final error to "step status code".
func refusalReason(err error) string {
	msg := strings.TrimPrefix(err.Error(), errFinal.Error()+": ")
	step, rest, _ := strings.Cut(msg, ":")
	status := strings.Fields(rest)
	code := ""
	if i := strings.Index(rest, `"code":"`); i >= 0 {
		code = rest[i+8:]
		if j := strings.IndexByte(code, '"'); j >= 0 {
			code = code[:j]
		}
	}
	if len(status) > 0 {
		step += " " + status[0]
	}
	return strings.TrimSpace(step + " " + code)
}

// gaveUpReason condenses a spent retry budget's last error to its step and
// what it last saw ("pay 502", "create no answer").
func gaveUpReason(err error) string {
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "gave up") {
		msg = rest
	}
	step, rest, _ := strings.Cut(msg, ":")
	f := strings.Fields(rest)
	switch {
	case len(f) > 0 && f[0] != "0":
		return step + " " + f[0]
	case strings.Contains(rest, "refused"):
		return step + " connection refused"
	case strings.Contains(rest, "deadline") || strings.Contains(rest, "Timeout"):
		return step + " timeout"
	}
	return step + " no answer"
}
