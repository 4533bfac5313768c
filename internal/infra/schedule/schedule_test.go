package schedule

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A slot is the same on every process of the fleet: an interval's is
// aligned to the Unix epoch (not to process start), a cron spec's is the
// latest fire time at or before the moment, looked for within a week.
func TestSlotsAndNext(t *testing.T) {
	day := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC) // a Saturday
	for _, tc := range []struct {
		name string
		spec string
		at   time.Duration
		slot time.Duration // after day's midnight; -1 for none
		next time.Duration
	}{
		{"every 10s, inside a slot", "@every 10s", 3*time.Hour + 7*time.Second, 3 * time.Hour, 3*time.Hour + 10*time.Second},
		{"every 10s, at a slot's start", "@every 10s", 3*time.Hour + 10*time.Second, 3*time.Hour + 10*time.Second, 3*time.Hour + 20*time.Second},
		{"every 10s, spaces around the interval", "@every  10s ", 25 * time.Second, 20 * time.Second, 30 * time.Second},
		{"daily at 03:00, before it: yesterday's", "0 3 * * *", 2*time.Hour + 59*time.Minute, -21 * time.Hour, 3 * time.Hour},
		{"daily at 03:00, exactly at it", "0 3 * * *", 3 * time.Hour, 3 * time.Hour, 27 * time.Hour},
		{"daily at 03:00, after it", "0 3 * * *", 5 * time.Hour, 3 * time.Hour, 27 * time.Hour},
		{"every minute by cron", "* * * * *", 185 * time.Second, 3 * time.Minute, 4 * time.Minute},
		{"weekly, six days on", "0 3 * * 6", 6*24*time.Hour + 4*time.Hour, 3 * time.Hour, 7*24*time.Hour + 3*time.Hour},
		{"yearly, outside the window", "0 3 1 1 *", 0, -1, 293*24*time.Hour + 3*time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			at := day.Add(tc.at)
			got := []time.Duration{-1, s.Next(at).Sub(day)}
			if slot := s.Slot(at); !slot.IsZero() {
				got[0] = slot.Sub(day)
			}
			if diff := cmp.Diff([]time.Duration{tc.slot, tc.next}, got); diff != "" {
				t.Errorf("[slot, next] (-want +got):\n%s", diff)
			}
		})
	}
}

// An interval that divides an hour in whole minutes is a cron spec for
// asynq's Scheduler, so every worker fires at the slot's start; any other
// is robfig's @every.
func TestEverySpec(t *testing.T) {
	got := map[time.Duration]string{}
	for _, d := range []time.Duration{time.Minute, 5 * time.Minute, time.Hour, 7 * time.Minute, 10 * time.Second, 2 * time.Hour} {
		got[d] = Every(d).Spec()
	}
	want := map[time.Duration]string{
		time.Minute: "*/1 * * * *", 5 * time.Minute: "*/5 * * * *", time.Hour: "0 * * * *",
		7 * time.Minute: "@every 7m0s", 10 * time.Second: "@every 10s", 2 * time.Hour: "@every 2h0m0s",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("specs (-want +got):\n%s", diff)
	}
	for _, spec := range got {
		if _, err := Parser.Parse(spec); err != nil {
			t.Errorf("asynq's parser refuses %q: %v", spec, err)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, spec := range []string{"@every", "@every 0s", "@every -1m", "@every soon", "every day", "61 * * * *", ""} {
		t.Run(spec, func(t *testing.T) {
			if _, err := Parse(spec); err == nil || !strings.Contains(err.Error(), "schedule") {
				t.Errorf("Parse(%q) error = %v, want one naming the schedule", spec, err)
			}
		})
	}
}
