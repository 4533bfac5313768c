package worker

import (
	"strings"
	"testing"
	"time"

	"orderflow/internal/infra/tasks"

	"github.com/google/go-cmp/cmp"
)

// A periodic slot is the same on every process of the fleet: an interval's
// is aligned to the Unix epoch (not to process start), a cron spec's is the
// latest fire time passed since the process started — zero before the first,
// so a worker starting at 02:59 does not run the 03:00 job early, and one
// starting at 03:00:05 leaves the 03:00 slot to the catch-up check.
func TestScheduleSlots(t *testing.T) {
	day := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		spec string
		at   []time.Duration // successive times after day's midnight, one schedule
		want []time.Duration // their slots after midnight; -1 for none
	}{
		{"every 10s, aligned to the epoch", "@every 10s",
			[]time.Duration{3*time.Hour + 7*time.Second, 3*time.Hour + 10*time.Second, 3*time.Hour + 19999*time.Millisecond},
			[]time.Duration{3 * time.Hour, 3*time.Hour + 10*time.Second, 3*time.Hour + 10*time.Second}},
		{"every 10s, spaces around the interval", "@every  10s ",
			[]time.Duration{25 * time.Second}, []time.Duration{20 * time.Second}},
		{"daily at 03:00, started before it", "0 3 * * *",
			[]time.Duration{2*time.Hour + 59*time.Minute, 3*time.Hour - time.Nanosecond, 3 * time.Hour, 5 * time.Hour, 27 * time.Hour},
			[]time.Duration{-1, -1, 3 * time.Hour, 3 * time.Hour, 27 * time.Hour}},
		{"daily at 03:00, started after it", "0 3 * * *",
			[]time.Duration{3*time.Hour + 5*time.Second, 26 * time.Hour, 27 * time.Hour},
			[]time.Duration{-1, -1, 27 * time.Hour}},
		{"every minute by cron, a tick skipped", "* * * * *",
			[]time.Duration{30 * time.Second, 60 * time.Second, 185 * time.Second},
			[]time.Duration{-1, time.Minute, 3 * time.Minute}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseSchedule(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			var got []time.Duration
			for _, at := range tc.at {
				slot := s.slot(day.Add(at))
				if slot.IsZero() {
					got = append(got, -1)
					continue
				}
				got = append(got, slot.Sub(day))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("slots (-want +got):\n%s", diff)
			}
		})
	}
}

// prev finds the slot a fleet that was down may have missed: the latest
// fire time at or before now, within the catch-up window (a week).
func TestCronPrevFindsMissedSlot(t *testing.T) {
	day := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		spec string
		now  time.Time
		want time.Time
	}{
		{"just after today's slot", "0 3 * * *", day.Add(3*time.Hour + 5*time.Second), day.Add(3 * time.Hour)},
		{"exactly at the slot", "0 3 * * *", day.Add(3 * time.Hour), day.Add(3 * time.Hour)},
		{"before today's slot: yesterday's", "0 3 * * *", day.Add(2 * time.Hour), day.Add(-21 * time.Hour)},
		{"weekly, six days on", "0 3 * * 6", day.Add(6*24*time.Hour + 4*time.Hour), day.Add(3 * time.Hour)}, // 2026-03-14 is a Saturday
		{"yearly, outside the window", "0 3 1 1 *", day, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseSchedule(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			m, ok := s.(missable)
			if !ok {
				t.Fatalf("cron schedule %q cannot be missed", tc.spec)
			}
			if got := m.prev(tc.now); !got.Equal(tc.want) {
				t.Errorf("prev(%v) = %v, want %v", tc.now, got, tc.want)
			}
		})
	}
	if s, _ := parseSchedule("@every 1m"); s != nil {
		if _, ok := s.(missable); ok {
			t.Error("an interval is missable: its current slot simply runs at start")
		}
	}
}

func TestParseScheduleRejects(t *testing.T) {
	for _, spec := range []string{"@every", "@every 0s", "@every -1m", "@every soon", "every day", "61 * * * *", ""} {
		t.Run(spec, func(t *testing.T) {
			if _, err := parseSchedule(spec); err == nil || !strings.Contains(err.Error(), "schedule") {
				t.Errorf("parseSchedule(%q) error = %v, want one naming the schedule", spec, err)
			}
		})
	}
}

// A slot's task ID is the same on every process, so asynq takes it once.
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
