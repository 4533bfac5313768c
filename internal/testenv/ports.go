package testenv

import (
	"fmt"
	"math/rand/v2"
	"net"
	"testing"
)

// sparePort finds a free TCP port below the kernel's ephemeral range, so no
// client connection can be handed the port while the server is down (and
// connect to itself).
func sparePort(t testing.TB) int {
	t.Helper()
	for range 200 {
		p := 20000 + rand.IntN(10000)
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		ln.Close()
		return p
	}
	t.Fatal("testenv: no spare port in 20000..29999")
	return 0
}

// SparePort returns a free TCP port for a process the test starts.
func SparePort(t testing.TB) int { return sparePort(t) }
