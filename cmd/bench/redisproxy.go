package main

import (
	"io"
	"net"

	"orderflow/internal/testenv/rediscmd"
)

// burstReader counts the reads that returned data: one per client write
// burst (a command, or a whole pipeline).
type burstReader struct {
	r io.Reader
	c *counter
}

func (b burstReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.c.addRoundTrip()
	}
	return n, err
}

// serveRedis sits between one product process and Redis and counts the
// commands it sends (by command and key shape) and its write bursts — a
// pipeline is one burst, so bursts approximate round trips.
func serveRedis(counts *counter, client, server net.Conn) {
	go func() {
		_, _ = io.Copy(client, server)
		client.Close()
	}()
	rediscmd.Count(io.TeeReader(burstReader{client, counts}, server), func(shape string) { counts.add(shape, false) })
}
