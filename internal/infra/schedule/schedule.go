// Package schedule says when the periodic jobs run. Every process computes
// the same slots from the same settings, so a slot names one run of a job
// for the whole fleet: the asynq Scheduler of each worker fires the job,
// and the run that claims the slot in the ledger first does the work.
package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Parser accepts standard 5-field cron specs and descriptors ("@daily").
var Parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// CatchUpWindow is how far back a slot is looked for: a daily or weekly
// schedule's last slot is always inside it.
const CatchUpWindow = 8 * 24 * time.Hour

// Schedule is one job's fire times.
type Schedule struct {
	spec  string
	every time.Duration // > 0: a fixed interval aligned to the Unix epoch
	cron  cron.Schedule
}

// Job is one periodic task type and when it runs.
type Job struct {
	Type string
	When Schedule
}

// Parse reads "@every 10s" as an epoch-aligned interval (robfig's own
// @every counts from process start, which differs per process) and anything
// else as a cron spec.
func Parse(spec string) (Schedule, error) {
	if d, ok := strings.CutPrefix(spec, "@every "); ok {
		dur, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil {
			return Schedule{}, fmt.Errorf("schedule %q: %w", spec, err)
		}
		if dur <= 0 {
			return Schedule{}, fmt.Errorf("schedule %q: the interval must be positive", spec)
		}
		return Every(dur), nil
	}
	c, err := Parser.Parse(spec)
	if err != nil {
		return Schedule{}, fmt.Errorf("schedule %q: %w", spec, err)
	}
	return Schedule{spec: spec, cron: c}, nil
}

// Every is a fixed interval aligned to the Unix epoch. Its asynq spec is a
// cron spec when the interval divides an hour in whole minutes, so the
// Scheduler fires at the slot's start on every worker; otherwise "@every",
// which fires once per interval from the worker's start (still once in
// every slot).
func Every(d time.Duration) Schedule {
	spec := "@every " + d.String()
	if d%time.Minute == 0 && d <= time.Hour && time.Hour%d == 0 {
		spec = fmt.Sprintf("*/%d * * * *", d/time.Minute)
		if d == time.Hour {
			spec = "0 * * * *"
		}
	}
	return Schedule{spec: spec, every: d}
}

// Spec is the schedule as asynq's Scheduler takes it.
func (s Schedule) Spec() string { return s.spec }

// String is the schedule as configured.
func (s Schedule) String() string {
	if s.every > 0 {
		return "@every " + s.every.String()
	}
	return s.spec
}

// Slot is the latest fire time at or before t: the slot a run starting at
// t is for. Zero when a cron schedule has not fired within CatchUpWindow.
func (s Schedule) Slot(t time.Time) time.Time {
	if s.every > 0 {
		return t.Truncate(s.every)
	}
	// Look back a minute, an hour, a day, the window: a frequent schedule
	// finds its slot in a step or two instead of walking a week of fires.
	for _, back := range []time.Duration{time.Minute, time.Hour, 24 * time.Hour, CatchUpWindow} {
		var last time.Time
		for at := s.cron.Next(t.Add(-back)); !at.After(t); at = s.cron.Next(at) {
			last = at
		}
		if !last.IsZero() {
			return last
		}
	}
	return time.Time{}
}

// Next is the first fire time after t.
func (s Schedule) Next(t time.Time) time.Time {
	if s.every > 0 {
		return t.Truncate(s.every).Add(s.every)
	}
	return s.cron.Next(t)
}

// Interval is the shortest gap between two fires (an estimate for cron
// schedules: the gap after t).
func (s Schedule) Interval(t time.Time) time.Duration {
	if s.every > 0 {
		return s.every
	}
	next := s.cron.Next(t)
	return s.cron.Next(next).Sub(next)
}
