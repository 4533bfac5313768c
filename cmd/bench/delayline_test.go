package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// TestDelayedConnKeepsOrderAndSpacing: every chunk arrives in order, no
// sooner than the delay after it was written, and chunks written back to
// back arrive together, not one delay after another.
func TestDelayedConnKeepsOrderAndSpacing(t *testing.T) {
	const d = 30 * time.Millisecond
	a, b := net.Pipe()
	defer b.Close()
	w := delayed(a, newPacer(d))
	type arrival struct {
		at time.Time
		b  []byte
	}
	got := make(chan arrival, 64)
	go func() {
		buf := make([]byte, 64)
		for {
			n, err := b.Read(buf)
			if n > 0 {
				got <- arrival{time.Now(), append([]byte(nil), buf[:n]...)}
			}
			if err != nil {
				close(got)
				return
			}
		}
	}()
	start := time.Now()
	var want []byte
	for i := range 10 {
		chunk := []byte{byte('a' + i)}
		want = append(want, chunk...)
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(d / 2)
	late := time.Now()
	if _, err := w.Write([]byte("z")); err != nil {
		t.Fatal(err)
	}
	want = append(want, 'z')
	w.Close()
	var all []byte
	var lastOfTen, zAt time.Time
	for a := range got {
		if first := a.at.Sub(start); first < d {
			t.Errorf("bytes %q arrived %v after the first write, want ≥ %v", a.b, first, d)
		}
		for _, c := range a.b {
			switch c {
			case 'j':
				lastOfTen = a.at
			case 'z':
				zAt = a.at
			}
		}
		all = append(all, a.b...)
	}
	if !bytes.Equal(all, want) {
		t.Fatalf("got %q, want %q", all, want)
	}
	// Ten writes back to back: all due d after the first, give or take the
	// scheduler; one after another would take 10 d.
	if took := lastOfTen.Sub(start); took > 3*d {
		t.Errorf("the tenth of ten pipelined chunks arrived %v after the first write, want about %v", took, d)
	}
	if z := zAt.Sub(late); z < d {
		t.Errorf("a chunk written %v later arrived %v after its write, want ≥ %v", late.Sub(start), z, d)
	}
	// Closed: the pipe's far end sees EOF once the queue is drained.
	if _, err := b.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("after Close: read error %v, want EOF", err)
	}
}
