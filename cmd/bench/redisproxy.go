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

// serveRedis sits between one client and Redis and counts its write bursts
// — a pipeline is one burst, so bursts approximate round trips — and, when
// counts names them, the commands it sends (by command and key shape).
func serveRedis(counts *counter, client, server net.Conn) {
	go func() {
		_, _ = io.Copy(client, server)
		client.Close()
	}()
	if !counts.shapes {
		_, _ = io.Copy(server, burstReader{client, counts})
		return
	}
	rediscmd.Count(io.TeeReader(burstReader{client, counts}, server), func(shape string) { counts.add(shape, false) })
}
