package paysim

import "time"

// SetClock makes now the simulator's clock: the time it stamps on every
// payment and refund it records, and the clock that decides whether a
// statement day is over. nil restores time.Now. A test puts payments on a
// past day by setting the clock there, and moves it past that day before it
// reads that day's statement.
func (s *Sim) SetClock(now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = now
}

// Now is the simulator's time by its clock.
func (s *Sim) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nowLocked()
}

// nowLocked is the clock's time in UTC, to the second (the precision of a
// provider's timestamps). s.mu must be held.
func (s *Sim) nowLocked() time.Time {
	return s.clock().UTC().Truncate(time.Second)
}
