package stripe

import (
	"net/http"
	"regexp"
	"strconv"
)

// createIntent is POST /v1/payment_intents.
func (f *Fake) createIntent(w http.ResponseWriter, r *http.Request) {
	if f.replay(w, r) {
		return
	}
	amount, err := strconv.ParseInt(r.PostForm.Get("amount"), 10, 64)
	currency := r.PostForm.Get("currency")
	if err != nil || amount <= 0 || len(currency) != 3 {
		f.fail(w, http.StatusBadRequest, "invalid_request_error", "parameter_missing", "amount and currency are required")
		return
	}
	f.mu.Lock()
	in := f.newIntentLocked(currency, r.PostForm.Get("description"), amount, metadata(r.PostForm))
	body := encode(in.object())
	f.mu.Unlock()
	f.remember(r, http.StatusOK, body)
	f.reply(w, http.StatusOK, body)
}

func (f *Fake) retrieveIntent(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	in := f.intents[r.PathValue("id")]
	var body []byte
	if in != nil {
		body = encode(f.intentObjectLocked(in, expands(r.Form, "latest_charge")))
	}
	f.mu.Unlock()
	if in == nil {
		f.fail(w, http.StatusNotFound, "invalid_request_error", "resource_missing", "No such payment_intent: '"+r.PathValue("id")+"'")
		return
	}
	f.reply(w, http.StatusOK, body)
}

// searchQuery is the one search form the fake understands.
var searchQuery = regexp.MustCompile(`^metadata\['([^']+)'\]:'([^']*)'$`)

func (f *Fake) searchIntents(w http.ResponseWriter, r *http.Request) {
	m := searchQuery.FindStringSubmatch(r.Form.Get("query"))
	if m == nil {
		f.fail(w, http.StatusBadRequest, "invalid_request_error", "parameter_invalid", "the fake searches metadata['key']:'value' only")
		return
	}
	var data []map[string]any
	expand := expands(r.Form, "data.latest_charge")
	f.mu.Lock()
	for _, in := range f.intents {
		if in.Metadata[m[1]] == m[2] {
			data = append(data, f.intentObjectLocked(in, expand))
		}
	}
	f.mu.Unlock()
	res := list("/v1/payment_intents/search", data)
	res["object"] = "search_result"
	res["next_page"] = nil
	f.reply(w, http.StatusOK, encode(res))
}

// createRefund is POST /v1/refunds: counted per Idempotency-Key before
// anything else, pending in the answer, settled at once with a
// refund.updated webhook unless dropped; with RefundTimeout the answer is
// held until the caller gives up.
func (f *Fake) createRefund(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	f.mu.Lock()
	f.sends.Add(key)
	f.mu.Unlock()
	if f.RefundTimeout.Load() {
		defer f.sent.Hold(r)
		w = discard{w}
	}
	if f.replay(w, r) {
		return
	}
	piID := r.PostForm.Get("payment_intent")
	f.mu.Lock()
	in := f.intents[piID]
	if in == nil || in.Status != "succeeded" {
		f.mu.Unlock()
		f.fail(w, http.StatusBadRequest, "invalid_request_error", "resource_missing", "No such payment_intent or it is not succeeded")
		return
	}
	amount := in.Received - f.refundedLocked(piID)
	if s := r.PostForm.Get("amount"); s != "" {
		amount, _ = strconv.ParseInt(s, 10, 64)
	}
	if amount <= 0 || amount > in.Received-f.refundedLocked(piID) {
		f.mu.Unlock()
		f.fail(w, http.StatusBadRequest, "invalid_request_error", "amount_too_large", "refund amount is greater than unrefunded amount")
		return
	}
	rf := f.newRefundLocked(in, amount, metadata(r.PostForm))
	body := encode(rf.object(in.Currency))
	rf.Status = "succeeded"
	if !f.DropRefundNotify.Load() {
		f.sendAsyncLocked("refund.updated", rf.object(in.Currency))
	}
	f.mu.Unlock()
	f.remember(r, http.StatusOK, body)
	f.reply(w, http.StatusOK, body)
}

// discard swallows an answer that is never to arrive.
type discard struct{ http.ResponseWriter }

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}

func (f *Fake) refundedLocked(piID string) int64 {
	var sum int64
	for _, rf := range f.byIntent[piID] {
		if rf.Status != "failed" && rf.Status != "canceled" {
			sum += rf.Amount
		}
	}
	return sum
}

func (f *Fake) listRefunds(w http.ResponseWriter, r *http.Request) {
	piID := r.Form.Get("payment_intent")
	var data []map[string]any
	f.mu.Lock()
	in := f.intents[piID]
	if in != nil {
		for _, rf := range f.byIntent[piID] {
			data = append(data, rf.object(in.Currency))
		}
	}
	f.mu.Unlock()
	if piID != "" && in == nil {
		f.fail(w, http.StatusNotFound, "invalid_request_error", "resource_missing", "No such payment_intent: '"+piID+"'")
		return
	}
	f.reply(w, http.StatusOK, encode(list("/v1/refunds", data)))
}

func (f *Fake) retrieveRefund(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	rf := f.refunds[r.PathValue("id")]
	var body []byte
	if rf != nil {
		body = encode(rf.object(f.intents[rf.Intent].Currency))
	}
	f.mu.Unlock()
	if rf == nil {
		f.fail(w, http.StatusNotFound, "invalid_request_error", "resource_missing", "No such refund: '"+r.PathValue("id")+"'")
		return
	}
	f.reply(w, http.StatusOK, body)
}

// object is the intent as Stripe's JSON; f.mu held.
func (in *intent) object() map[string]any {
	o := map[string]any{
		"id": in.ID, "object": "payment_intent", "amount": in.Amount, "amount_capturable": 0,
		"amount_received": in.Received, "currency": in.Currency, "status": in.Status,
		"client_secret": in.Secret, "description": in.Description, "metadata": in.Metadata,
		"created": unix(in.Created), "livemode": false, "capture_method": "automatic",
		"confirmation_method": "automatic", "payment_method_types": []string{"card"}, "latest_charge": nil,
	}
	if in.Status == "succeeded" {
		o["latest_charge"] = chargeID(in.ID)
	}
	return o
}

// intentObjectLocked is the intent with latest_charge expanded when asked
// (expand[]=latest_charge) and there is one; f.mu held.
func (f *Fake) intentObjectLocked(in *intent, expandCharge bool) map[string]any {
	o := in.object()
	if expandCharge && in.Status == "succeeded" {
		o["latest_charge"] = f.chargeLocked(in)
	}
	return o
}

// newIntentLocked records a PaymentIntent awaiting payment; f.mu held.
func (f *Fake) newIntentLocked(currency, description string, amount int64, meta map[string]string) *intent {
	id := "pi_" + randHex(12)
	in := &intent{ID: id, Currency: currency, Description: description, Amount: amount,
		Status: "requires_payment_method", Secret: id + "_secret_" + randHex(12), Metadata: meta, Created: f.now()}
	f.intents[id] = in
	if no := meta["order_no"]; no != "" && f.byOrder[no] == nil {
		f.byOrder[no] = in
	}
	return in
}

// newRefundLocked records a pending refund of the intent and its balance
// transaction (Stripe debits the balance when the refund is created); the
// caller has checked the amount; f.mu held.
func (f *Fake) newRefundLocked(in *intent, amount int64, meta map[string]string) *refund {
	rf := &refund{ID: "re_" + randHex(12), Intent: in.ID, Status: "pending", Amount: amount,
		Metadata: meta, Created: f.now()}
	f.refunds[rf.ID] = rf
	f.byIntent[in.ID] = append(f.byIntent[in.ID], rf)
	rf.TxnID = f.ledger.add(&txn{Type: "refund", Category: "refund", Created: rf.Created,
		Amount: -amount, Currency: in.Currency, Ref: rf.ID, refund: rf})
	return rf
}

// chargeID is the id of an intent's (one) charge.
func chargeID(intentID string) string { return "ch_" + intentID[3:] }

// object is the refund as Stripe's JSON; f.mu held.
func (rf *refund) object(currency string) map[string]any {
	return map[string]any{
		"id": rf.ID, "object": "refund", "amount": rf.Amount, "currency": currency,
		"payment_intent": rf.Intent, "charge": chargeID(rf.Intent), "status": rf.Status,
		"balance_transaction": rf.TxnID, "metadata": rf.Metadata, "created": unix(rf.Created), "reason": nil,
	}
}
