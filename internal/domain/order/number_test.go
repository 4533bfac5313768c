package order

import (
	"regexp"
	"slices"
	"testing"
	"time"
)

// newNumber promises a number that sorts by creation time (to the
// millisecond, across days) and never repeats: asynq runs tasks due in the
// same second in the order of their IDs, which embed the number.
func TestNewNumberSortsByCreationTime(t *testing.T) {
	type pair struct {
		name          string
		before, after time.Time
	}
	day := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	for _, tc := range []pair{
		{"one millisecond apart", day.Add(time.Hour), day.Add(time.Hour + time.Millisecond)},
		{"midnight and the millisecond after", day, day.Add(time.Millisecond)},
		{"last millisecond of a day and the next day", day.Add(24*time.Hour - time.Millisecond), day.Add(24 * time.Hour)},
		{"across a month", time.Date(2026, 1, 31, 23, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 1, 0, 0, 0, time.UTC)},
		{"across a year", time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"another zone, one millisecond apart in UTC", day.Add(23 * time.Hour).In(time.FixedZone("UTC+8", 8*3600)), day.Add(23*time.Hour + time.Millisecond)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 { // the random tail must never decide the order
				a, b := newNumber("O", tc.before), newNumber("O", tc.after)
				if a >= b {
					t.Fatalf("number at %v (%s) does not sort before the one at %v (%s)", tc.before, a, tc.after, b)
				}
			}
		})
	}
}

// The layout: the prefix, the UTC date, six base-36 digits of the
// millisecond of the day, then 16 base-32 characters (80 random bits).
func TestNewNumberLayout(t *testing.T) {
	at := time.Date(2026, 3, 14, 0, 0, 1, 500*int(time.Millisecond), time.UTC) // 1500 ms = "00015o" in base 36
	got := newNumber("O", at)
	if !regexp.MustCompile(`^O260314` + `00015o` + `[a-z2-7]{16}$`).MatchString(got) {
		t.Errorf("newNumber = %q, want O, 260314, 00015o and 16 base-32 characters", got)
	}
	if last := newNumber("O", time.Date(2026, 3, 14, 23, 59, 59, 999e6, time.UTC)); len(last) != len(got) {
		t.Errorf("the day's last number %q has another length than %q: numbers would not sort", last, got)
	}
}

// Numbers made in the same millisecond still differ.
func TestNewNumberUniqueWithinMillisecond(t *testing.T) {
	at := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	seen := make([]string, 0, 10000)
	for range cap(seen) {
		seen = append(seen, newNumber("O", at))
	}
	slices.Sort(seen)
	if n := len(slices.Compact(seen)); n != cap(seen) {
		t.Errorf("%d numbers made in one millisecond hold only %d distinct ones", cap(seen), n)
	}
}
