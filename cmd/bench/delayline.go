package main

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// delayLine passes what is written to it on to a connection a fixed delay
// after each write, in order: a queue of (due, bytes) drained by its own
// goroutine. Each chunk is due d after it was written whatever waits before
// it, so pipelined writes keep their spacing and the delay does not add up
// chunk by chunk, as a sleep before each write would. The queue is not
// bounded: it holds at most d of traffic while the far side reads.
//
// The alarm is armed exactly while the queue holds something (or the line
// is shutting), for the head's due time less the pacer's lead: the writer
// parks once per wake-up, on the alarm alone.
type delayLine struct {
	conn  net.Conn
	pace  *pacer
	alarm *alarm
	mu    sync.Mutex
	queue []delayedChunk
	shut  bool // no more writes; close conn once the queue is drained
	err   error
	// ahead: the alarm was set before its time came, for the head's due
	// time, so its lateness measures the wake-up (not a backlog).
	ahead bool
}

type delayedChunk struct {
	due time.Time
	b   []byte
}

// delayedConn is a connection whose writes arrive later; reads pass as
// they are. Close lets the writes already made arrive, then closes.
type delayedConn struct {
	net.Conn
	line *delayLine
}

// delayed wraps conn so that what is written to it leaves pace's delay
// later (none when pace is nil, or when no alarm can be had).
func delayed(conn net.Conn, pace *pacer) net.Conn {
	if pace == nil {
		return conn
	}
	a, err := newAlarm()
	if err != nil {
		logf("delay line: %v; this connection is not delayed", err)
		return conn
	}
	l := &delayLine{conn: conn, pace: pace, alarm: a}
	go l.run()
	return delayedConn{Conn: conn, line: l}
}

func (c delayedConn) Write(p []byte) (int, error) { return c.line.write(p) }

func (c delayedConn) Close() error {
	c.line.close()
	return nil
}

func (l *delayLine) write(p []byte) (int, error) {
	due := time.Now().Add(l.pace.d)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return 0, l.err
	}
	if l.shut {
		return 0, net.ErrClosed
	}
	l.queue = append(l.queue, delayedChunk{due: due, b: append([]byte(nil), p...)})
	if len(l.queue) == 1 {
		l.arm(due)
	}
	return len(p), nil
}

// arm sets the alarm for a chunk due at due; l.mu is held.
func (l *delayLine) arm(due time.Time) {
	at := due.Add(-l.pace.lead())
	l.ahead = time.Now().Before(at)
	if err := l.alarm.arm(at); err != nil && l.err == nil {
		l.err = err
	}
}

// close stops new writes; the line closes the connection once what it
// holds has been written, or a second later at most (a peer that stopped
// reading must not keep the bench's goroutine).
func (l *delayLine) close() {
	l.mu.Lock()
	if !l.shut {
		l.shut = true
		if len(l.queue) == 0 {
			l.arm(time.Time{})
		}
		time.AfterFunc(l.pace.d+time.Second, func() { l.conn.Close() })
	}
	l.mu.Unlock()
}

// run writes, each time the alarm rings, the chunks due by then, in one
// write.
func (l *delayLine) run() {
	defer l.alarm.close()
	defer l.conn.Close()
	var out []byte
	for {
		if err := l.alarm.wait(); err != nil {
			return
		}
		now := time.Now()
		by := now.Add(l.pace.lead())
		l.mu.Lock()
		if l.err != nil || (l.shut && len(l.queue) == 0) {
			l.mu.Unlock()
			return
		}
		out = out[:0]
		n := 0
		for n < len(l.queue) && !l.queue[n].due.After(by) {
			out = append(out, l.queue[n].b...)
			n++
		}
		if n > 0 && l.ahead {
			l.pace.woke(l.queue[0].due, now)
		}
		m := copy(l.queue, l.queue[n:])
		clear(l.queue[m:])
		l.queue = l.queue[:m]
		switch {
		case m > 0:
			l.arm(l.queue[0].due)
		case l.shut:
			l.arm(time.Time{})
		}
		l.mu.Unlock()
		if len(out) == 0 {
			continue
		}
		if _, err := l.conn.Write(out); err != nil {
			l.mu.Lock()
			l.err, l.queue = err, nil
			l.mu.Unlock()
			return
		}
	}
}

// pacer is the delay a proxy's lines share, and how early they set their
// alarms for it. An alarm rings late — the kernel's wake-up, then the
// scheduler: tens of microseconds on the 2-core box, more under load, and
// more under the product's load than under the floor's — so each line
// reports how late it wrote a chunk it set its alarm for, and the lead follows the mean
// lateness: on average a chunk leaves when it is due, whatever the load.
type pacer struct {
	d      time.Duration
	leadNs atomic.Int64 // 0..d/2
}

// newPacer is nil (no delay) for d ≤ 0.
func newPacer(d time.Duration) *pacer {
	if d <= 0 {
		return nil
	}
	return &pacer{d: d}
}

func (p *pacer) lead() time.Duration { return time.Duration(p.leadNs.Load()) }

// woke moves the lead a sixteenth of the way towards having sent a chunk
// due at due on time (it went at at); one wake-up is counted as at most an
// eighth of the delay off, so a stall of a few milliseconds (the box is
// shared) does not throw the lead to its bound.
func (p *pacer) woke(due, at time.Time) {
	late := min(max(at.Sub(due), -p.d/8), p.d/8)
	for {
		old := p.leadNs.Load()
		next := min(max(old+int64(late)/16, 0), int64(p.d/2))
		if p.leadNs.CompareAndSwap(old, next) {
			return
		}
	}
}
