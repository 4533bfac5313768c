package operations

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"orderflow/internal/testenv"
	"orderflow/svc"
)

// Every listener — the API's, the worker's, the simulator's — closes a
// connection that trickles its body once the read timeout passes, and a
// keep-alive connection that idles after its response once the idle timeout
// passes. Before the limits were settings only ReadHeaderTimeout was set and
// both connections stayed open for as long as the client liked.
func TestListenersCloseSlowAndIdleConnections(t *testing.T) {
	const readTimeout, idleTimeout = 1500 * time.Millisecond, time.Second
	cfg := testenv.Config(t)
	cfg.HTTPReadHeaderTimeout = svc.Duration(time.Second)
	cfg.HTTPReadTimeout = svc.Duration(readTimeout)
	cfg.HTTPIdleTimeout = svc.Duration(idleTimeout)
	cfg.HTTPWriteTimeout = svc.Duration(5 * time.Second)
	s := testenv.StartWith(t, cfg, testenv.Options{})
	listeners := map[string]string{
		"api":    strings.TrimPrefix(s.APIURL, "http://"),
		"worker": s.Worker.Addr(),
		"paysim": strings.TrimPrefix(s.SimURL, "http://"),
	}
	// slack covers a loaded machine; the trickle alone would run for 40 s.
	const slack = 3 * time.Second
	for name, addr := range listeners {
		t.Run(name+" trickled body", func(t *testing.T) {
			conn := dial(t, addr)
			start := time.Now()
			fmt.Fprintf(conn, "POST /api/v1/payments/notify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n")
			closed := make(chan time.Duration, 1)
			go func() { _, _ = io.Copy(io.Discard, conn); closed <- time.Since(start) }()
			for range 40 {
				if _, err := conn.Write([]byte("{")); err != nil {
					break // the server has gone
				}
				select {
				case d := <-closed:
					closed <- d
				case <-time.After(time.Second):
					continue
				}
				break
			}
			select {
			case d := <-closed:
				if d > readTimeout+slack {
					t.Errorf("closed after %v, want within the read timeout %v (+%v)", d, readTimeout, slack)
				}
				t.Logf("trickling connection closed after %v (read timeout %v)", d.Round(time.Millisecond), readTimeout)
			case <-time.After(readTimeout + slack):
				t.Fatalf("a body trickled at 1 B/s still open after %v (read timeout %v)", time.Since(start), readTimeout)
			}
		})
		t.Run(name+" idle keep-alive", func(t *testing.T) {
			conn := dial(t, addr)
			fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
			buf := make([]byte, 4096)
			n, err := conn.Read(buf)
			if err != nil || !strings.HasPrefix(string(buf[:n]), "HTTP/1.1 ") {
				t.Fatalf("first response: %q, %v", buf[:n], err)
			}
			idleFrom := time.Now()
			_ = conn.SetReadDeadline(time.Now().Add(idleTimeout + slack))
			for {
				_, err = conn.Read(buf)
				if err != nil {
					break
				}
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("an idle keep-alive connection still open after %v (idle timeout %v)", time.Since(idleFrom), idleTimeout)
			}
			t.Logf("idle connection closed after %v (idle timeout %v): %v", time.Since(idleFrom).Round(time.Millisecond), idleTimeout, err)
		})
	}
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// Setting only ORDERFLOW_CLAIM_TIMEOUT=5s (a SPEC knob, below the old fixed
// activation timeout of 2m) starts the API and the worker with the shipped
// etc/*.yaml; the worker's activation deadline is derived below it. On the
// code before, both refused to start with "setting ORDERFLOW_ACTIVATE_TIMEOUT:
// must be shorter than claim_timeout" — a value the user never set.
func TestClaimTimeoutAloneStartsEveryProcess(t *testing.T) {
	cfg := testenv.Config(t)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct{ name, bin, yaml string }{
		{"api", testenv.Binary("api"), "api.yaml"},
		{"queue", testenv.Binary("queue"), "queue.yaml"},
	} {
		t.Run(p.name, func(t *testing.T) {
			addr := freeAddr(t)
			// Only what a deployment must provide (where the services are,
			// the secrets) and the one knob; everything else from etc/.
			env := []string{
				"PATH=" + os.Getenv("PATH"),
				"ORDERFLOW_CONFIG=" + wd + "/../../etc/" + p.yaml,
				"ORDERFLOW_MYSQL_DSN=" + cfg.MySQLDSN,
				"ORDERFLOW_REDIS_DB=" + fmt.Sprint(cfg.RedisDB),
				"ORDERFLOW_HTTP_ADDR=" + addr,
				"ORDERFLOW_ADMIN_TOKEN=" + cfg.AdminToken,
				"ORDERFLOW_PAY_SECRET=" + cfg.PaySecret,
				"ORDERFLOW_CLAIM_TIMEOUT=5s",
			}
			c := startChild(t, p.name, p.bin, env)
			waitHTTP(t, "http://"+addr+"/healthz", 30*time.Second)
			select {
			case <-c.Done():
				t.Fatalf("%s exited: %v\n%s", p.name, c.Err(), c.Out.String())
			default:
			}
		})
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
