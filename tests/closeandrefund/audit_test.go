package closeandrefund

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"orderflow/internal/domain/refund"
	"orderflow/internal/infra/failpoint"
	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/google/go-cmp/cmp"
)

const annToken = "audit-ann-operator-token-01"

// An operator named ann retries a failed order and resolves a refund in
// manual: each action leaves one audit entry naming ann and what changed,
// read back by the object's number; a repeated retry (409) leaves none.
func TestAuditTrailNamesTheOperator(t *testing.T) {
	ctx := context.Background()
	s := testenv.StartFailFast(t, testenv.Shared, "ann:operator:"+annToken)
	ann := &testenv.Client{Base: s.APIURL, Token: annToken}

	pid := s.NewProduct(t, map[string]any{"sku": "audit", "kind": "card", "price_cents": 700})
	s.AddCards(t, pid, "AUDIT", 3)
	_, buyer := s.NewUser(t, "audit", 0)
	var dup apiError // the creation, now in a transaction with its entry, still refuses a duplicate
	if st := s.Admin.Do(t, "POST", "/api/v1/admin/products", map[string]any{"sku": "audit", "kind": "card", "price_cents": 700}, &dup); st != 409 || dup.Error.Code != "duplicate_sku" {
		t.Errorf("second product with sku audit: status %d %+v, want 409 duplicate_sku", st, dup)
	}
	var made []string // the admin's (ORDERFLOW_ADMIN_TOKEN, named admin) creations
	for _, e := range ann.AuditTrail(t, fmt.Sprintf("product:%d", pid)) {
		made = append(made, e.Actor+" "+e.Action+" "+fmt.Sprint(e.Detail["added"]))
	}
	if want := []string{"admin product_create <nil>", "admin cards_add 3"}; !slices.Equal(made, want) {
		t.Errorf("audit of product %d: %q, want %q", pid, made, want)
	}

	// A failed order, retried by ann once the delivery works again.
	o := buyer.CreateOrder(t, pid, 1)
	s.PayUntilFailed(t, o, "TAUDIT1", 20*time.Second)
	if got := ann.AuditTrail(t, o.OrderNo); len(got) != 0 {
		t.Errorf("the system's own moves wrote audit entries: %+v", got)
	}
	failpoint.Disable(failpoint.ActivateDeliver)
	if st := ann.Do(t, "POST", "/api/v1/admin/orders/"+o.OrderNo+"/retry", nil, nil); st != 200 {
		t.Fatalf("ann's retry: status %d", st)
	}
	s.WaitStatus(t, o.OrderNo, model.OrderFinished, 20*time.Second)
	var e apiError
	if st := ann.Do(t, "POST", "/api/v1/admin/orders/"+o.OrderNo+"/retry", nil, &e); st != 409 {
		t.Errorf("retry of a finished order: status %d %+v, want 409", st, e)
	}
	retried := ann.AuditTrail(t, o.OrderNo)
	want := []testenv.AuditEntry{{Actor: "ann", Action: "order_retry", Object: o.OrderNo, Detail: map[string]any{"from": "failed", "to": "paid"}}}
	if diff := cmp.Diff(want, retried, ignoreAt); diff != "" {
		t.Errorf("audit of the retried order (-want +got):\n%s", diff)
	}
	if len(retried) == 1 && (retried[0].At.IsZero() || time.Since(retried[0].At) > time.Minute) {
		t.Errorf("entry at %v, want the retry's time", retried[0].At)
	}

	// A late payment whose refund the provider declares failed, resolved by ann.
	late := buyer.CreateOrder(t, pid, 1)
	if err := cancelOrder(buyer, late.OrderNo); err != nil {
		t.Fatal(err)
	}
	refundNo := refund.Number(late.OrderNo, "TAUDIT2")
	if err := s.Pay.FailRefund(ctx, refundNo); err != nil {
		t.Fatal(err)
	}
	if _, err := payOrder(s, late.OrderNo, late.AmountCents, "TAUDIT2"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "refund "+refundNo+" manual", func() (bool, error) {
		n := s.Count(t, `SELECT COUNT(*) FROM refunds WHERE refund_no = ? AND status = ?`, refundNo, model.RefundManual)
		return n == 1, nil
	})
	for i, wantSt := range []int{200, 409} {
		if st := ann.Do(t, "POST", "/api/v1/admin/refunds/"+refundNo+"/resolve", nil, nil); st != wantSt {
			t.Errorf("resolve #%d: status %d, want %d", i+1, st, wantSt)
		}
	}
	want = []testenv.AuditEntry{{Actor: "ann", Action: "refund_resolve", Object: refundNo, Detail: map[string]any{
		"from": "manual", "to": "succeeded", "order_no": late.OrderNo, "amount_cents": float64(late.AmountCents),
	}}}
	if diff := cmp.Diff(want, ann.AuditTrail(t, refundNo), ignoreAt); diff != "" {
		t.Errorf("audit of the resolved refund (-want +got):\n%s", diff)
	}

	var bad apiError
	for _, q := range []string{"", "?object=", "?object=" + strings.Repeat("x", 65)} {
		if st := ann.Do(t, "GET", "/api/v1/admin/audit"+q, nil, &bad); st != 400 || bad.Error.Code != "invalid_object" {
			t.Errorf("audit%s: status %d %+v, want 400 invalid_object", q, st, bad)
		}
	}
}
