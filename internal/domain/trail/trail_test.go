package trail_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"orderflow/internal/domain/trail"
	"orderflow/internal/infra/operators"
	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/google/go-cmp/cmp"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func newStore(t *testing.T) *model.Store {
	t.Helper()
	db := testenv.Ledger(t)
	return model.NewStore(db)
}

var ann = operators.Operator{Name: "ann", Role: operators.RoleOperator, Token: "ann-token-0123456789"}

// entry is what an operator reads of one audit entry.
type entry struct {
	Actor, Action, Object string
	Detail                map[string]any
}

func entries(t *testing.T, es []model.AuditEntry) []entry {
	t.Helper()
	out := make([]entry, 0, len(es))
	for _, e := range es {
		var d map[string]any
		if err := json.Unmarshal(e.Detail, &d); err != nil {
			t.Fatalf("detail %s: %v", e.Detail, err)
		}
		out = append(out, entry{e.Actor, e.Action, e.Object, d})
	}
	return out
}

// Record writes an entry only for an operator's action, and only with the
// transaction it rides: the system's own calls (no operator in the
// context) and a rolled-back effect leave nothing; a committed one leaves
// who did what to which object, and what changed. The trail reads oldest
// first, one object's or several objects' together.
func TestRecordRidesTheTransaction(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	tr := &trail.Trail{Store: st}
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	opCtx := operators.WithOperator(context.Background(), ann)
	undone := errors.New("effect rolled back")
	record := func(ctx context.Context, action, object string, detail trail.Detail, fail error) error {
		return st.InTx(ctx, func(tx *model.Store) error {
			if err := trail.Record(ctx, tx, at, action, object, detail); err != nil {
				return err
			}
			return fail
		})
	}
	steps := []struct {
		name   string
		ctx    context.Context
		action string
		object string
		detail trail.Detail
		fail   error
	}{
		{"the system's own call: nothing", context.Background(), trail.OrderRetry, "O1", trail.Detail{"from": "failed"}, nil},
		{"an operator's action: recorded", opCtx, trail.OrderRetry, "O1", trail.Detail{"from": "failed", "to": "paid"}, nil},
		{"rolled back with its effect: nothing", opCtx, trail.OrderRefund, "O1", trail.Detail{"amount": 100}, undone},
		{"no detail: an empty object", opCtx, trail.GroupRetry, "G1", nil, nil},
		{"a later action on the first object", opCtx, trail.RefundRetry, "O1", trail.Detail{"reason": "bank back"}, nil},
	}
	for _, s := range steps {
		if err := record(s.ctx, s.action, s.object, s.detail, s.fail); !errors.Is(err, s.fail) {
			t.Fatalf("%s: InTx = %v, want %v", s.name, err, s.fail)
		}
	}
	for _, tc := range []struct {
		name    string
		objects []string
		want    []entry
	}{
		{"one object, oldest first", []string{"O1"}, []entry{
			{"ann", trail.OrderRetry, "O1", map[string]any{"from": "failed", "to": "paid"}},
			{"ann", trail.RefundRetry, "O1", map[string]any{"reason": "bank back"}},
		}},
		{"another object", []string{"G1"}, []entry{{"ann", trail.GroupRetry, "G1", map[string]any{}}}},
		{"several objects together, oldest first", []string{"G1", "O1"}, []entry{
			{"ann", trail.OrderRetry, "O1", map[string]any{"from": "failed", "to": "paid"}},
			{"ann", trail.GroupRetry, "G1", map[string]any{}},
			{"ann", trail.RefundRetry, "O1", map[string]any{"reason": "bank back"}},
		}},
		{"an object nobody touched", []string{"O2"}, []entry{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []model.AuditEntry
			var err error
			if len(tc.objects) == 1 {
				got, err = tr.For(context.Background(), tc.objects[0])
			} else {
				got, err = tr.ForAll(context.Background(), tc.objects...)
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, entries(t, got)); diff != "" {
				t.Errorf("trail (-want +got):\n%s", diff)
			}
			for _, e := range got {
				if !e.At.Equal(at) {
					t.Errorf("entry at %v, want %v", e.At, at)
				}
			}
		})
	}
}

// A detail that is not JSON fails the action's transaction rather than
// writing a broken entry.
func TestRecordRefusesADetailThatIsNotJSON(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := operators.WithOperator(context.Background(), ann)
	err := st.InTx(ctx, func(tx *model.Store) error {
		return trail.Record(ctx, tx, time.Now(), trail.OrderRetry, "O1", trail.Detail{"f": func() {}})
	})
	if err == nil {
		t.Fatal("Record of a function in the detail: nil error")
	}
	if got, err := st.AuditFor(context.Background(), "O1"); err != nil || len(got) != 0 {
		t.Errorf("trail after the refused record: %v, %v; want none", got, err)
	}
}

// The trail is read by an order, refund or group number: empty or longer
// than any of them is refused as invalid_object, alone or among others.
func TestTrailBoundsTheObject(t *testing.T) {
	t.Parallel()
	tr := &trail.Trail{Store: newStore(t)}
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		objects []string
		ok      bool
	}{
		{"empty", []string{""}, false},
		{"65 characters", []string{strings.Repeat("x", 65)}, false},
		{"64 characters", []string{strings.Repeat("x", 64)}, true},
		{"one character", []string{"O"}, true},
		{"several, one empty", []string{"O1", ""}, false},
		{"several, one too long", []string{"O1", strings.Repeat("x", 65)}, false},
		{"several, all fine", []string{"O1", strings.Repeat("x", 64)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if len(tc.objects) == 1 {
				_, err = tr.For(ctx, tc.objects[0])
			} else {
				_, err = tr.ForAll(ctx, tc.objects...)
			}
			switch {
			case tc.ok && err != nil:
				t.Errorf("trail of %q: %v", tc.objects, err)
			case !tc.ok && !errors.Is(err, trail.ErrBadObject):
				t.Errorf("trail of %q: %v, want ErrBadObject", tc.objects, err)
			}
		})
	}
}
