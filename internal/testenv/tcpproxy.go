package testenv

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TCPProxy forwards a spare local port to a target (the shared MariaDB, say)
// and can be cut and restored, so a test can make a shared service
// unreachable for its own stack without touching the service itself.
type TCPProxy struct {
	target string
	port   int

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	stall time.Duration  // held back from the next reply, then cleared
	wg    sync.WaitGroup // the accept loop and every copier
}

// StartTCPProxy listens on a spare port and forwards every connection to
// target. It is closed when the test ends.
func StartTCPProxy(t testing.TB, target string) *TCPProxy {
	t.Helper()
	p := &TCPProxy{target: target, port: sparePort(t), conns: map[net.Conn]struct{}{}}
	p.Restore(t)
	t.Cleanup(p.cut)
	return p
}

// Addr is the proxy's host:port; it stays the same across cuts.
func (p *TCPProxy) Addr() string { return "127.0.0.1:" + strconv.Itoa(p.port) }

// Cut stops listening (new connections are refused) and drops every open
// connection in both directions, as if the target's host went away.
func (p *TCPProxy) Cut(t testing.TB) {
	t.Helper()
	p.cut()
}

func (p *TCPProxy) cut() {
	p.mu.Lock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// Restore listens on the proxy's port again.
func (p *TCPProxy) Restore(t testing.TB) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		t.Fatalf("testenv: proxy %s is not cut", p.Addr())
	}
	var ln net.Listener
	var err error
	for range 50 { // the port may linger for a moment after a cut
		if ln, err = net.Listen("tcp", p.Addr()); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("testenv: proxy listen %s: %v", p.Addr(), err)
	}
	p.ln = ln
	p.wg.Add(1)
	go p.accept(ln)
}

func (p *TCPProxy) accept(ln net.Listener) {
	defer p.wg.Done()
	for {
		in, err := ln.Accept()
		if err != nil {
			return // closed by cut
		}
		out, err := net.DialTimeout("tcp", p.target, 2*time.Second)
		if err != nil {
			_ = in.Close()
			continue
		}
		if !p.track(ln, in, out) {
			return
		}
		p.wg.Add(2)
		go p.pipe(in, out, true)
		go p.pipe(out, in, false)
	}
}

// track registers a connection pair unless the listener it came from was
// cut meanwhile.
func (p *TCPProxy) track(ln net.Listener, conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != ln {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

// StallNextReply holds the next bytes the target sends back (on any
// connection) for d before passing them on: the target has done the work,
// the client waits past its read timeout — a stall, not an outage.
func (p *TCPProxy) StallNextReply(d time.Duration) {
	p.mu.Lock()
	p.stall = d
	p.mu.Unlock()
}

func (p *TCPProxy) takeStall() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.stall
	p.stall = 0
	return d
}

// pipe copies src to dst; reply is the target→client direction, the one a
// stall holds back.
func (p *TCPProxy) pipe(dst, src net.Conn, reply bool) {
	defer p.wg.Done()
	if reply {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if d := p.takeStall(); d > 0 {
					time.Sleep(d)
				}
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
	} else {
		_, _ = io.Copy(dst, src)
	}
	// One direction ended: end the pair, as a dropped link would.
	_ = dst.Close()
	_ = src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// String names the proxy in messages.
func (p *TCPProxy) String() string { return fmt.Sprintf("proxy %s→%s", p.Addr(), p.target) }
