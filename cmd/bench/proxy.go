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

// startCountingProxy listens in front of upstream and, until it is closed,
// hands each client connection with its own upstream connection to serve,
// which forwards both ways and tallies into counts; both are closed after.
func startCountingProxy(upstream string, serve func(counts *counter, client, server net.Conn)) (*countingProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &countingProxy{ln: ln, upstream: upstream, counts: newCounter()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.pipe(c, serve)
		}
	}()
	return p, nil
}

func (p *countingProxy) pipe(client net.Conn, serve func(*counter, net.Conn, net.Conn)) {
	defer client.Close()
	server, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	defer server.Close()
	serve(p.counts, client, server)
}

func (p *countingProxy) addr() string { return p.ln.Addr().String() }
func (p *countingProxy) close()       { p.ln.Close() }
