package dispute_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"orderflow/internal/domain/dispute"
	"orderflow/internal/domain/order"
	"orderflow/internal/infra/pay"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"

	"github.com/google/go-cmp/cmp"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The dispute record on a real ledger (MariaDB, and the dev mode's SQLite),
// one update after another: what each update leaves in the row, how many
// rows, shop webhooks and admin alerts there are. The cases run in order;
// each builds on the one before.
func TestApply(t *testing.T) {
	t.Parallel()
	testenv.EachBackend(t, testApply)
}

func testApply(t *testing.T, backend testenv.Backend) {
	s := testenv.Start(t, testenv.Options{Backend: backend, NoWorker: true, Configure: func(c *svc.Config) {
		// Webhooks on, so a new dispute writes its order.disputed row;
		// nothing delivers it (no worker).
		c.WebhookURL, c.WebhookSecret = "http://127.0.0.1:1/hook", "secret"
	}})
	ctx := context.Background()
	uc, st := s.UC, s.SC.Store
	// Paid, never activated (no worker): a dispute on it is not_delivered.
	orderNo := s.NewShop(t, "dispute", 700).Order(t)
	if _, err := uc.Orders.Pay(ctx, order.Payment{OrderNo: orderNo, TradeNo: "T-D1", AmountCents: 700}); err != nil {
		t.Fatal(err)
	}
	due := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	upd := func(id, trade, status string) *pay.DisputeUpdate {
		return &pay.DisputeUpdate{ID: id, TradeNo: trade, Status: status, Reason: "fraudulent", AmountCents: 700, EvidenceDueBy: due}
	}
	type row struct {
		Status    model.DisputeStatus
		LostCents int64
		Flag      string
		Closed    bool
	}
	type counts struct{ Rows, Webhooks, Opened, Unknown int64 }
	for _, tc := range []struct {
		name string
		u    *pay.DisputeUpdate
		row  *row // the dispute's row after the update; nil: none
		n    counts
	}{
		{"created: recorded, flagged, one webhook and one alert", upd("du_1", "T-D1", "needs_response"),
			&row{"needs_response", 0, model.DisputeFlagNotDelivered, false}, counts{1, 1, 1, 0}},
		{"created again: nothing new", upd("du_1", "T-D1", "needs_response"),
			&row{"needs_response", 0, model.DisputeFlagNotDelivered, false}, counts{1, 1, 1, 0}},
		{"updated: moved forward", upd("du_1", "T-D1", "under_review"),
			&row{"under_review", 0, model.DisputeFlagNotDelivered, false}, counts{1, 1, 1, 0}},
		{"an older status arriving late: nothing", upd("du_1", "T-D1", "needs_response"),
			&row{"under_review", 0, model.DisputeFlagNotDelivered, false}, counts{1, 1, 1, 0}},
		{"closed lost: closed, the money taken back recorded", upd("du_1", "T-D1", "lost"),
			&row{"lost", 700, model.DisputeFlagNotDelivered, true}, counts{1, 1, 1, 0}},
		{"closed lost again: nothing new", upd("du_1", "T-D1", "lost"),
			&row{"lost", 700, model.DisputeFlagNotDelivered, true}, counts{1, 1, 1, 0}},
		{"updated after the close: not reopened", upd("du_1", "T-D1", "under_review"),
			&row{"lost", 700, model.DisputeFlagNotDelivered, true}, counts{1, 1, 1, 0}},
		{"a status this version does not know: ignored", upd("du_2", "T-D1", "someday_status"),
			nil, counts{1, 1, 1, 0}},
		{"a trade the ledger does not know: nothing recorded, the admin alerted", upd("du_3", "T-NONE", "needs_response"),
			nil, counts{1, 1, 1, 1}},
		{"the unknown trade again: one alert", upd("du_3", "T-NONE", "needs_response"),
			nil, counts{1, 1, 1, 1}},
		{"first seen closed (its created event lost): recorded lost", upd("du_4", "T-D1", "lost"),
			&row{"lost", 700, model.DisputeFlagNotDelivered, true}, counts{2, 2, 2, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := uc.Payments.Disputes.Apply(ctx, pay.NamePaysim, tc.u); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			d, err := st.DisputeByID(ctx, tc.u.ID)
			var got *row
			if err == nil {
				got = &row{d.Status, d.LostCents, d.Flag, !d.Open()}
				if d.EvidenceDueBy == nil || !d.EvidenceDueBy.Equal(due) || d.OrderNo != orderNo {
					t.Errorf("dispute of order %s due %v, want of %s due %v", d.OrderNo, d.EvidenceDueBy, orderNo, due)
				}
			}
			if diff := cmp.Diff(tc.row, got); diff != "" {
				t.Errorf("dispute row (-want +got):\n%s", diff)
			}
			n := counts{
				Rows:     s.Count(t, `SELECT COUNT(*) FROM disputes`),
				Webhooks: s.Count(t, `SELECT COUNT(*) FROM webhooks WHERE type = ?`, "order.disputed"),
				Opened:   s.Count(t, `SELECT COUNT(*) FROM notifications WHERE kind = ?`, dispute.NotifyOpened),
				Unknown:  s.Count(t, `SELECT COUNT(*) FROM notifications WHERE kind = ?`, dispute.NotifyUnknownTrade),
			}
			if diff := cmp.Diff(tc.n, n); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := st.DisputeByID(ctx, "du_2"); !errors.Is(err, model.ErrNotFound) {
		t.Errorf("a dispute in an unknown status was recorded (err %v)", err)
	}
}

// An update with its id or trade missing is refused (the provider sends
// it again), and records nothing.
func TestApplyRefusesUnusable(t *testing.T) {
	t.Parallel()
	s := testenv.Start(t, testenv.Options{NoWorker: true})
	for _, u := range []*pay.DisputeUpdate{
		{ID: "", TradeNo: "T", Status: "needs_response"},
		{ID: "du_x", TradeNo: "", Status: "needs_response"},
		{ID: "du_y", TradeNo: "T", Status: "needs_response", AmountCents: -1},
	} {
		if err := s.UC.Payments.Disputes.Apply(context.Background(), pay.NamePaysim, u); err == nil {
			t.Errorf("Apply(%+v) = nil, want an error", u)
		}
	}
	if n := s.Count(t, `SELECT COUNT(*) FROM disputes`); n != 0 {
		t.Errorf("%d disputes recorded from unusable updates", n)
	}
}
