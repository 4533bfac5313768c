package tasks

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hibiken/asynq"
)

// RetrySpan is the sum of a generation's retry delays: the shortest time
// from its first failed try to its archiving.
func TestRetrySpan(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name string
		spec Spec
		want time.Duration
	}{
		{"no retries", Spec{MaxRetry: 0, Delay: doubling(s, 1)}, 0},
		{"no delay function", Spec{MaxRetry: 5}, 0},
		{"stepped, last step held", Spec{MaxRetry: 4, Delay: stepped([]time.Duration{s, 2 * s})}, s + 2*s + 2*s + 2*s},
		{"doubling, capped at 4×", Spec{MaxRetry: 5, Delay: doubling(s, 4)}, s + 2*s + 4*s + 4*s + 4*s},
		{"the reconciliation's 20 retries", NewTable(Config{})[TypeReconcile], 959 * s},
		{"the webhook schedule: 5 s doubling to the one-hour cap", NewTable(Config{WebhookRetryDelay: 5 * s})[TypeWebhookDeliver], 5115*s + 15*time.Hour},
		{"the settle schedule", NewTable(Config{SettleRetryDelays: []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s}})[TypeGroupSettle], 31 * s},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.spec.RetrySpan(); got != tc.want {
				t.Errorf("RetrySpan = %v, want %v", got, tc.want)
			}
		})
	}
}

// The schedules never go negative or overflow on odd retry counts, and an
// empty stepped schedule falls back to a minute rather than panicking.
func TestScheduleEdges(t *testing.T) {
	got := []time.Duration{
		stepped(nil)(0), stepped([]time.Duration{time.Second})(-1),
		doubling(time.Millisecond, 32)(-3), doubling(time.Millisecond, 32)(1000),
		capped(time.Second, time.Hour)(-1), capped(time.Second, time.Hour)(3), capped(time.Second, time.Hour)(1 << 30),
	}
	want := []time.Duration{time.Minute, time.Second, time.Millisecond, 32 * time.Millisecond,
		time.Second, 8 * time.Second, time.Hour}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
}

// Every task type has a queue asynq serves, a retry budget, a timeout and
// someone who takes over after its last retry.
func TestTableIsComplete(t *testing.T) {
	table := NewTable(Config{ActivateTimeout: time.Minute, SweepInterval: time.Minute, PayTimeout: time.Second,
		NotifyInterval: time.Minute, ActivateRetryDelay: time.Second,
		RefundRetryDelays: []time.Duration{time.Minute}, SettleRetryDelays: []time.Duration{time.Second}})
	types := []string{TypeOrderActivate, TypeOrderClose, TypeRefundExecute, TypeGroupSettle, TypeNotifyDeliver, TypePaymentQuery, TypeSweep, TypeReconcile, TypeWebhookDeliver,
		TypeStatementRun, TypeStatements}
	if len(table) != len(types) {
		t.Errorf("the table has %d types, want %d", len(table), len(types))
	}
	for _, typ := range types {
		s, ok := table[typ]
		switch {
		case !ok:
			t.Errorf("%s: not in the table", typ)
		case QueueWeights[s.Queue] == 0:
			t.Errorf("%s: queue %q has no weight, so no worker serves it", typ, s.Queue)
		case s.Timeout <= 0:
			t.Errorf("%s: no timeout", typ)
		case s.Delay == nil:
			t.Errorf("%s: no retry schedule", typ)
		case s.Exhausted == 0:
			t.Errorf("%s: nobody takes over after the last retry", typ)
		}
	}
}

func TestNewTask(t *testing.T) {
	table := NewTable(Config{ActivateTimeout: time.Minute, ActivateRetryDelay: time.Second})
	at := time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC)
	task, err := table.NewTask(TypeOrderClose, ID(TypeOrderClose, "O1", 2), Encode(OrderPayload{OrderNo: "O1", Gen: 2}), at)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := task.Type(), TypeOrderClose; got != want {
		t.Errorf("type = %q, want %q", got, want)
	}
	var p OrderPayload
	if err := Decode(task, &p); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(OrderPayload{OrderNo: "O1", Gen: 2}, p); diff != "" {
		t.Errorf("payload (-want +got):\n%s", diff)
	}
	if got, want := ID(TypeOrderClose, "O1", 2), "order:close:O1:2"; got != want {
		t.Errorf("ID = %q, want %q", got, want)
	}
	if _, err := table.NewTask("no:such:type", "x", nil, at); err == nil {
		t.Error("NewTask accepted an unknown type")
	}
}

// A payload that cannot be decoded never will: asynq must not retry it.
func TestDecodeSkipsRetryOfBadPayload(t *testing.T) {
	var p OrderPayload
	err := Decode(asynq.NewTask(TypeOrderClose, []byte(`{"order_no":`)), &p)
	if !errors.Is(err, asynq.SkipRetry) {
		t.Errorf("Decode error = %v, want one wrapping asynq.SkipRetry", err)
	}
}
