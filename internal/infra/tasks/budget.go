package tasks

import (
	"strconv"
	"time"
)

// Exhaustion is who takes over an object when asynq archives its task
// (retries spent): an archived task is never the end of an object.
type Exhaustion int

const (
	// ExhaustedToSweep: the object stays non-terminal and the sweep, finding
	// its current generation archived (not live), re-queues it under a new one.
	ExhaustedToSweep Exhaustion = iota + 1
	// ExhaustedToTerminal: the last try itself moves the object to a
	// terminal or operator status; if that write is lost, the object is
	// still non-terminal and the sweep re-queues it like ExhaustedToSweep.
	ExhaustedToTerminal
	// ExhaustedToNextSlot: a periodic job; the next slot runs it again.
	ExhaustedToNextSlot
)

// RetrySpan is the shortest time from a generation's first failed try to
// its archiving: the sum of its retry delays (a try that fails at once, as
// under refused connections, adds nothing). An outage shorter than this
// is ridden out by the generation itself.
func (s Spec) RetrySpan() time.Duration {
	var d time.Duration
	for n := range s.MaxRetry {
		if s.Delay != nil {
			d += s.Delay(n)
		}
	}
	return d
}

// PeriodicID is a periodic job's task ID for one slot: every process of the
// fleet derives the same one, so asynq takes the slot once.
func PeriodicID(typ string, slot time.Time) string {
	return typ + ":" + strconv.FormatInt(slot.UnixMilli(), 10)
}

// PeriodicPayload is a periodic task's payload. The asynq Scheduler's tasks
// carry none: their slot is the schedule's at the moment they run. A
// catch-up names its slot; a reconciliation triggered by a lost Redis names
// the epoch marker instead and claims no slot.
type PeriodicPayload struct {
	Slot  int64  `json:"slot,omitempty"` // Unix milliseconds
	Epoch string `json:"epoch,omitempty"`
}
