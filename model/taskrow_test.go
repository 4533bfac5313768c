package model_test

import (
	"testing"
	"time"

	"orderflow/model"

	"github.com/google/go-cmp/cmp"
)

// TaskRow owns the whole-second rounding asynq needs: asynq stores a
// scheduled time in whole Unix seconds and truncates, so a future time is
// rounded up (a close must never run while the buyer may still pay), while
// a task due now or in the past runs now, unrounded.
func TestTaskRowRoundsFutureTimesUpToWholeSecond(t *testing.T) {
	now := time.Date(2026, 3, 14, 10, 0, 0, 250*int(time.Millisecond), time.UTC)
	sec := time.Date(2026, 3, 14, 10, 0, 5, 0, time.UTC) // a whole second after now
	for _, tc := range []struct {
		name      string
		processAt time.Time
		want      time.Time
	}{
		{name: "zero time runs now, unrounded", processAt: time.Time{}, want: now},
		{name: "past runs now, unrounded", processAt: now.Add(-time.Hour), want: now},
		{name: "exactly now runs now, unrounded", processAt: now, want: now},
		{name: "future whole second kept", processAt: sec, want: sec},
		{name: "a nanosecond past a second rounds up", processAt: sec.Add(time.Nanosecond), want: sec.Add(time.Second)},
		{name: "half a second rounds up, not to nearest", processAt: sec.Add(400 * time.Millisecond), want: sec.Add(time.Second)},
		{name: "just before a second rounds up to it", processAt: sec.Add(-time.Nanosecond), want: sec},
		{name: "a nanosecond in the future rounds up", processAt: now.Add(time.Nanosecond), want: now.Truncate(time.Second).Add(time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := model.TaskRow("order:close:O1:1", "order:close", []byte(`{"order_no":"O1"}`), tc.processAt, now)
			want := &model.OutboxRow{
				TaskID: "order:close:O1:1", TaskType: "order:close", Payload: []byte(`{"order_no":"O1"}`),
				ProcessAt: tc.want, CreatedAt: now,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("TaskRow (-want +got):\n%s", diff)
			}
			if tc.processAt.After(now) && got.ProcessAt.Before(tc.processAt) {
				t.Errorf("ProcessAt %v is before the asked %v: the task would run early", got.ProcessAt, tc.processAt)
			}
		})
	}
}
