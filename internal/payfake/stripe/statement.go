// The fake's statement: GET /v1/balance_transactions, the balance
// transactions of everything it processed — a charge per succeeded intent,
// a refund per refund (orderflow's and the Dashboard's), an adjustment per
// dispute opened (and one more for a dispute won) — newest first, filtered
// by created[gte|gt|lt|lte], paged by limit (≤ 100) and starting_after with
// has_more, with expand[]=data.source rendering each source object as
// Stripe does. StatementDrop and StatementAlter spoil it on purpose.

package stripe

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ChargeFee is the fake's card fee on a charge: 2.9% + 30 cents, rounded
// down (Stripe's list price in the US).
func ChargeFee(cents int64) int64 { return cents*29/1000 + 30 }

// txn is one balance transaction; Amount and Fee are signed as Stripe
// lists them (money leaving the balance is negative).
type txn struct {
	ID, Type, Category, Currency string
	Created                      time.Time
	Amount, Fee                  int64
	// Ref is what StatementDrop and StatementAlter name: the intent id of
	// a charge, the refund's or dispute's id.
	Ref     string
	seq     int64
	intent  *intent
	refund  *refund
	dispute *dispute
}

// txnLedger holds the balance transactions and a newest-first index built
// lazily, so a page of a large day costs a binary search, not a scan;
// f.mu guards it.
type txnLedger struct {
	txns   []*txn
	sorted bool
	pos    map[string]int // id → index in txns once sorted
}

// add records t with a fresh id and returns the id.
func (l *txnLedger) add(t *txn) string {
	t.ID = "txn_" + randHex(12)
	t.seq = int64(len(l.txns))
	l.txns = append(l.txns, t)
	l.sorted = false
	return t.ID
}

// sort orders the transactions newest first (Stripe's order), the later
// recorded first within a second.
func (l *txnLedger) sort() {
	if l.sorted {
		return
	}
	sort.Slice(l.txns, func(i, j int) bool {
		a, b := l.txns[i], l.txns[j]
		if a.Created.Unix() != b.Created.Unix() {
			return a.Created.Unix() > b.Created.Unix()
		}
		return a.seq > b.seq
	})
	l.pos = make(map[string]int, len(l.txns))
	for i, t := range l.txns {
		l.pos[t.ID] = i
	}
	l.sorted = true
}

// PayUnseen is the buyer's money arriving with the product never told: the
// order's intent (created, in f.Currency, when the fake has none for it)
// succeeds for cents with no webhook sent; a later QueryPayment sees it. It
// returns the intent id, the trade number.
func (f *Fake) PayUnseen(orderNo string, cents int64) (string, error) {
	if cents <= 0 {
		return "", fmt.Errorf("stripe fake: payment of %d cents", cents)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	in := f.intentLocked(orderNo)
	if in == nil {
		in = f.newIntentLocked(f.Currency, "", cents, map[string]string{"order_no": orderNo})
	}
	if in.Status == "succeeded" {
		return "", fmt.Errorf("stripe fake: the payment intent of order %s is already paid", orderNo)
	}
	f.succeedLocked(in, cents)
	return in.ID, nil
}

// succeedLocked succeeds the intent for cents: its charge is created now
// and credited to the balance less ChargeFee; f.mu held.
func (f *Fake) succeedLocked(in *intent, cents int64) {
	in.Status, in.Received, in.PaidAt = "succeeded", cents, f.now()
	in.TxnID = f.ledger.add(&txn{Type: "charge", Category: "charge", Created: in.PaidAt,
		Amount: cents, Fee: ChargeFee(cents), Currency: in.Currency, Ref: in.ID, intent: in})
}

// chargeLocked is the succeeded intent's charge as Stripe's JSON. Stripe
// copies an intent's metadata into the charge it creates when the intent
// is confirmed (support.stripe.com, "How metadata works with related
// objects"), so the charge names the order too; f.mu held.
func (f *Fake) chargeLocked(in *intent) map[string]any {
	refunded := f.refundedLocked(in.ID)
	disputed := false
	for _, d := range f.disputes {
		disputed = disputed || d.Intent == in.ID
	}
	return map[string]any{
		"id": chargeID(in.ID), "object": "charge", "amount": in.Received, "amount_captured": in.Received,
		"amount_refunded": refunded, "refunded": refunded == in.Received, "captured": true, "paid": true,
		"balance_transaction": in.TxnID, "created": unix(in.PaidAt), "currency": in.Currency,
		"description": in.Description, "disputed": disputed, "livemode": false, "metadata": in.Metadata,
		"payment_intent": in.ID, "status": "succeeded",
	}
}

// listBalanceTransactions is GET /v1/balance_transactions.
func (f *Fake) listBalanceTransactions(w http.ResponseWriter, r *http.Request) {
	lo, hi, err := createdRange(r.Form)
	limit := int64(10)
	if err == nil && r.Form.Get("limit") != "" {
		limit, err = strconv.ParseInt(r.Form.Get("limit"), 10, 64)
		if err == nil && (limit < 1 || limit > 100) {
			err = fmt.Errorf("limit must be between 1 and 100")
		}
	}
	if err == nil && r.Form.Get("ending_before") != "" {
		err = fmt.Errorf("the fake pages forward only (starting_after)")
	}
	if err != nil {
		f.fail(w, http.StatusBadRequest, "invalid_request_error", "parameter_invalid", err.Error())
		return
	}
	expand := expands(r.Form, "data.source")
	f.mu.Lock()
	l := &f.ledger
	l.sort()
	// Newest first: skip what is newer than hi, stop below lo.
	start := sort.Search(len(l.txns), func(i int) bool { return l.txns[i].Created.Unix() <= hi })
	if after := r.Form.Get("starting_after"); after != "" {
		i, ok := l.pos[after]
		if !ok {
			f.mu.Unlock()
			f.fail(w, http.StatusBadRequest, "invalid_request_error", "resource_missing", "No such balance transaction: '"+after+"'")
			return
		}
		start = max(start, i+1)
	}
	data := []map[string]any{}
	more := false
	for _, t := range l.txns[start:] {
		if t.Created.Unix() < lo {
			break
		}
		if f.StatementDrops(t.Ref) {
			continue
		}
		if int64(len(data)) == limit {
			more = true
			break
		}
		data = append(data, f.txnObjectLocked(t, expand))
	}
	f.mu.Unlock()
	res := list("/v1/balance_transactions", data)
	res["has_more"] = more
	f.reply(w, http.StatusOK, encode(res))
}

// txnObjectLocked is the balance transaction as Stripe's JSON, its source
// an id or, expanded, the object; f.mu held.
func (f *Fake) txnObjectLocked(t *txn, expand bool) map[string]any {
	amount := t.Amount
	if t.intent != nil {
		amount = f.StatementAmount(t.Ref, t.Amount)
	}
	var source any
	switch {
	case t.intent != nil:
		source = chargeID(t.intent.ID)
		if expand {
			source = f.chargeLocked(t.intent)
		}
	case t.refund != nil:
		source = t.refund.ID
		if expand {
			source = t.refund.object(f.intents[t.refund.Intent].Currency)
		}
	case t.dispute != nil:
		source = t.dispute.ID
		if expand {
			source = t.dispute.object()
		}
	}
	return map[string]any{
		"id": t.ID, "object": "balance_transaction", "amount": amount, "fee": t.Fee, "net": amount - t.Fee,
		"currency": t.Currency, "created": unix(t.Created), "available_on": unix(t.Created.Add(48 * time.Hour)),
		"type": t.Type, "reporting_category": t.Category, "source": source, "status": "available",
		"description": nil, "exchange_rate": nil, "balance_type": "payments",
		"fee_details": feeDetails(t.Fee, t.Currency),
	}
}

func feeDetails(fee int64, currency string) []map[string]any {
	if fee == 0 {
		return []map[string]any{}
	}
	return []map[string]any{{"amount": fee, "currency": currency, "type": "stripe_fee",
		"description": "Stripe processing fees", "application": nil}}
}

// createdRange reads created[gte|gt|lt|lte] (or an exact created) into an
// inclusive range of Unix seconds.
func createdRange(v url.Values) (lo, hi int64, err error) {
	lo, hi = 0, 1<<62
	bound := func(key string, adjust int64, into *int64, keepMax bool) {
		s := v.Get(key)
		if s == "" || err != nil {
			return
		}
		n, perr := strconv.ParseInt(s, 10, 64)
		if perr != nil {
			err = fmt.Errorf("%s must be a Unix timestamp", key)
			return
		}
		n += adjust
		if keepMax {
			*into = max(*into, n)
		} else {
			*into = min(*into, n)
		}
	}
	bound("created", 0, &lo, true)
	bound("created", 0, &hi, false)
	bound("created[gte]", 0, &lo, true)
	bound("created[gt]", 1, &lo, true)
	bound("created[lte]", 0, &hi, false)
	bound("created[lt]", -1, &hi, false)
	return lo, hi, err
}

// expands reports whether the request asks to expand field, in any of the
// spellings Stripe takes: expand[]=, expand[0]=, expand=.
func expands(v url.Values, field string) bool {
	for k, vs := range v {
		if k != "expand" && !strings.HasPrefix(k, "expand[") {
			continue
		}
		for _, s := range vs {
			if s == field {
				return true
			}
		}
	}
	return false
}
