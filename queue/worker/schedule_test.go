package worker

import (
	"testing"
	"time"

	"orderflow/internal/infra/tasks"

	"github.com/google/go-cmp/cmp"
)

// The slots themselves are internal/infra/schedule's (schedule_test.go).

// A catch-up's task ID is its slot's, the same on every process, so workers
// starting together queue one task for the slot.
func TestPeriodicIDIsTheSlots(t *testing.T) {
	slot := time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC)
	got := []string{
		tasks.PeriodicID(tasks.TypeReconcile, slot),
		tasks.PeriodicID(tasks.TypeReconcile, slot.In(time.FixedZone("UTC+8", 8*3600))),
		tasks.PeriodicID(tasks.TypeReconcile, slot.Add(time.Millisecond)),
	}
	want := []string{
		tasks.TypeReconcile + ":1773457200000",
		tasks.TypeReconcile + ":1773457200000",
		tasks.TypeReconcile + ":1773457200001",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("periodic IDs (-want +got):\n%s", diff)
	}
}
