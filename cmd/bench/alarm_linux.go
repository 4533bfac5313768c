package main

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// alarm is a Linux timerfd read through Go's network poller. Go's own
// timers are no use for a delay of 0.5 ms: while the process idles, the
// poller waits in whole milliseconds, so a 0.5 ms timer fires after about
// 1.1 ms. A thread sleeping in nanosleep(2) wakes in time but costs the
// scheduler a hand-off each time (~130 µs of CPU a chunk measured on the
// 2-core box). A timerfd fires on time (no timer slack) and parks only the
// goroutine waiting for it.
type alarm struct {
	f  *os.File
	rc syscall.RawConn
}

// timerfd_create(2)'s clock and flags; itimerspec is struct itimerspec.
const (
	clockMonotonic = 1
	tfdFlags       = syscall.O_NONBLOCK | syscall.O_CLOEXEC
)

type itimerspec struct{ interval, value syscall.Timespec }

func newAlarm() (*alarm, error) {
	fd, _, errno := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, tfdFlags, 0)
	if errno != 0 {
		return nil, os.NewSyscallError("timerfd_create", errno)
	}
	f := os.NewFile(fd, "timerfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &alarm{f: f, rc: rc}, nil
}

// arm sets the alarm to ring at t (at once when t has passed), replacing
// any time it was set for.
func (a *alarm) arm(t time.Time) error {
	// A zero value disarms a timerfd: ring after a nanosecond instead.
	spec := itimerspec{value: syscall.NsecToTimespec(max(int64(time.Until(t)), 1))}
	var errno syscall.Errno
	if err := a.rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	}); err != nil {
		return err
	}
	if errno != 0 {
		return os.NewSyscallError("timerfd_settime", errno)
	}
	return nil
}

// wait parks the calling goroutine until the alarm rings.
func (a *alarm) wait() error {
	var expirations [8]byte
	_, err := a.f.Read(expirations[:])
	return err
}

func (a *alarm) close() { a.f.Close() }
