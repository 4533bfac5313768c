package main

import "sync"

// counter tallies named events (statements, Redis commands) and round trips.
type counter struct {
	// shapes: name each statement and command (the census); without, only
	// round trips are counted, as naming a statement costs ~40 µs of the
	// bench's CPU and the distance phase shares the box with what it measures.
	shapes     bool
	mu         sync.Mutex
	byName     map[string]int64
	roundTrips int64
}

// newCounter names what it counts.
func newCounter() *counter { return &counter{shapes: true, byName: map[string]int64{}} }

// newRoundTripCounter counts round trips only.
func newRoundTripCounter() *counter { return &counter{byName: map[string]int64{}} }

func (c *counter) add(name string, roundTrip bool) {
	c.mu.Lock()
	c.byName[name]++
	if roundTrip {
		c.roundTrips++
	}
	c.mu.Unlock()
}

func (c *counter) addRoundTrip() {
	c.mu.Lock()
	c.roundTrips++
	c.mu.Unlock()
}

// tally is a counter's content at one moment.
type tally struct {
	byName     map[string]int64
	roundTrips int64
}

func (c *counter) snapshot() tally {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string]int64, len(c.byName))
	for k, v := range c.byName {
		m[k] = v
	}
	return tally{byName: m, roundTrips: c.roundTrips}
}

func (t tally) minus(o tally) tally {
	m := map[string]int64{}
	for k, v := range t.byName {
		if d := v - o.byName[k]; d != 0 {
			m[k] = d
		}
	}
	return tally{byName: m, roundTrips: t.roundTrips - o.roundTrips}
}
