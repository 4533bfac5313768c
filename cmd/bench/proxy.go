package main

import (
	"net"
	"strings"
	"time"
)

// proxy is the bench's TCP proxy: a loopback listener in front of one
// upstream, each accepted connection given its own upstream connection and
// served by a protocol's forwarder, which tallies into counts what it reads
// (the census), while the answers can be held back a round trip (the
// distance phase): it counts, delays, or both.
//
// The whole round trip is taken on the way back: a request reaches the
// server at once and its answer reaches the client rtt later. A client
// sees the same distance as with half of it each way (every exchange, and
// every message one process sends another through MariaDB or Redis,
// crosses the wire once each way), and the proxy holds and wakes for half
// as many chunks: each costs it a timer and a wake-up of CPU the product
// shares, where a real network would cost the product none.
type proxy struct {
	ln       net.Listener
	upstream string
	pace     *pacer // the answers' delay, a whole round trip; nil: none
	counts   *counter
}

// forwarder copies one connection both ways and tallies into counts what
// the client sends; it returns when the client is done.
type forwarder func(counts *counter, client, server net.Conn)

// startProxy listens in front of upstream until it is closed; what the
// server answers reaches the client rtt after it was read (none when 0).
func startProxy(upstream string, serve forwarder, counts *counter, rtt time.Duration) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{ln: ln, upstream: upstream, pace: newPacer(rtt), counts: counts}
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

func (p *proxy) pipe(clientConn net.Conn, serve forwarder) {
	client := delayed(clientConn, p.pace)
	defer client.Close()
	serverConn, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	defer serverConn.Close()
	serve(p.counts, client, serverConn)
}

func (p *proxy) addr() string { return p.ln.Addr().String() }
func (p *proxy) close()       { p.ln.Close() }

// route is dsn with the upstream's address replaced by the proxy's.
func (p *proxy) route(dsn string) string { return strings.Replace(dsn, p.upstream, p.addr(), 1) }

// proxies are a proxy in front of MariaDB and one in front of Redis for the
// API and for the workers each, so each process kind's traffic is counted
// apart.
type proxies struct {
	apiSQL, workerSQL, apiRedis, workerRedis *proxy
}

// startProxies starts the four, each with its own counter from newCounts
// and the given round trip.
func startProxies(p Params, newCounts func() *counter, rtt time.Duration) (*proxies, error) {
	mysqlAddr, err := mysqlHostPort(p.MySQL)
	if err != nil {
		return nil, err
	}
	px := &proxies{}
	for _, v := range []struct {
		at       **proxy
		upstream string
		serve    forwarder
	}{
		{&px.apiSQL, mysqlAddr, serveMySQL}, {&px.workerSQL, mysqlAddr, serveMySQL},
		{&px.apiRedis, p.RedisAddr, serveRedis}, {&px.workerRedis, p.RedisAddr, serveRedis},
	} {
		if *v.at, err = startProxy(v.upstream, v.serve, newCounts(), rtt); err != nil {
			px.close()
			return nil, err
		}
	}
	return px, nil
}

// stackConfig starts the product with the API and the workers each
// reaching MariaDB (dsn) and Redis through their own proxies.
func (px *proxies) stackConfig(label, dsn string) stackConfig {
	return stackConfig{
		label: label, mysqlDSN: px.workerSQL.route(dsn), redisAddr: px.workerRedis.addr(),
		apiDSN: px.apiSQL.route(dsn), apiRedis: px.apiRedis.addr(),
	}
}

func (px *proxies) close() {
	for _, p := range []*proxy{px.apiSQL, px.workerSQL, px.apiRedis, px.workerRedis} {
		if p != nil {
			p.close()
		}
	}
}

// proxyTallies are the four proxies' counts at one moment.
type proxyTallies struct{ apiSQL, workerSQL, apiRedis, workerRedis tally }

func (px *proxies) snapshot() proxyTallies {
	return proxyTallies{px.apiSQL.counts.snapshot(), px.workerSQL.counts.snapshot(), px.apiRedis.counts.snapshot(), px.workerRedis.counts.snapshot()}
}
