package main

import "net"

// countingProxy is what the census's MySQL and Redis proxies share: a
// loopback listener in front of one upstream, each accepted connection served
// by the protocol's own serve, and the tallies it keeps.
type countingProxy struct {
	ln       net.Listener
	upstream string
	counts   *counter
}

func listenCountingProxy(upstream string) (*countingProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return &countingProxy{ln: ln, upstream: upstream, counts: newCounter()}, nil
}

// accept serves every connection with serve until the listener closes.
func (p *countingProxy) accept(serve func(net.Conn)) {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go serve(c)
	}
}

func (p *countingProxy) addr() string { return p.ln.Addr().String() }
func (p *countingProxy) close()       { p.ln.Close() }
