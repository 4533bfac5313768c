//go:build !linux

package main

import "time"

// alarm rings on Go's timers where there is no timerfd: about a
// millisecond late while the process idles.
type alarm struct{ t *time.Timer }

func newAlarm() (*alarm, error) {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &alarm{t: t}, nil
}

func (a *alarm) arm(at time.Time) error {
	a.t.Reset(time.Until(at))
	return nil
}

func (a *alarm) wait() error {
	<-a.t.C
	return nil
}

func (a *alarm) close() { a.t.Stop() }
