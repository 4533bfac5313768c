package operations

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"orderflow/internal/testenv"
)

var dsnHostRE = regexp.MustCompile(`tcp\(([^)]+)\)`)

// /readyz on the API and on the worker turns 503, naming the dependency,
// while Redis or the database is unreachable, and 200 again when it
// returns; /healthz stays 200 throughout. Redis is a private redis-server
// the test kills and restarts; the database is the shared MariaDB reached
// through a proxy the test cuts and restores.
func TestReadyzFollowsRedisAndDatabase(t *testing.T) {
	cfg := testenv.Config(t)
	rs := testenv.StartRedisServer(t)
	m := dsnHostRE.FindStringSubmatch(cfg.MySQLDSN)
	if m == nil {
		t.Fatalf("no tcp(host) in DSN %q", cfg.MySQLDSN)
	}
	proxy := testenv.StartTCPProxy(t, m[1])
	cfg.MySQLDSN = dsnHostRE.ReplaceAllString(cfg.MySQLDSN, "tcp("+proxy.Addr()+")")
	cfg.RedisAddr, cfg.RedisDB = rs.Addr(), 0
	s := testenv.StartWith(t, cfg, testenv.Options{})

	procs := map[string]string{"api": s.APIURL, "worker": "http://" + s.Worker.Addr()}
	expect := func(state string, status int, checks map[string]string) {
		t.Helper()
		for name, base := range procs {
			var last string
			testenv.Eventually(t, 15*time.Second, name+" /readyz "+state, func() (bool, error) {
				st, body, err := get(base+"/readyz", nil)
				last = body
				if err != nil || st != status {
					return false, err
				}
				var got map[string]string
				if err := json.Unmarshal([]byte(body), &got); err != nil {
					return false, err
				}
				for k, v := range checks {
					if got[k] != v {
						return false, nil
					}
				}
				return true, nil
			})
			if st, _, err := get(base+"/healthz", nil); err != nil || st != 200 {
				t.Errorf("%s /healthz while %s: status %d, err %v; want 200", name, state, st, err)
			}
			t.Logf("%s /readyz %s: %d %s", name, state, status, last)
		}
	}
	allOK := map[string]string{"database": "ok", "redis": "ok", "migrations": "ok"}

	expect("at start", 200, allOK)

	rs.Kill(t)
	expect("with Redis killed", 503, map[string]string{"redis": "unreachable", "database": "ok"})
	rs.Start(t)
	expect("with Redis back", 200, allOK)

	proxy.Cut(t)
	expect("with the database cut", 503, map[string]string{"database": "unreachable", "redis": "ok"})
	proxy.Restore(t)
	expect("with the database back", 200, allOK)

	rs.Kill(t)
	proxy.Cut(t)
	expect("with both down", 503, map[string]string{"database": "unreachable", "redis": "unreachable"})
	proxy.Restore(t)
	rs.Start(t)
	expect("with both back", 200, allOK)
}
