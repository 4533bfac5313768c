package devmode_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"orderflow/internal/testenv"
)

// TestReadmeDevCommandAndWalkthrough is done-when 1 of the zero-set-up
// issue: the README's one command (`go run ./cmd/orderflow dev`) brings the
// system up with nothing but Go, the walkthrough's curl calls take an order
// to finished, the process never talks to the shared MariaDB (3306) or Redis
// (6379) — even with ORDERFLOW_MYSQL_DSN pointing there — and Ctrl-C stops
// it cleanly.
func TestReadmeDevCommandAndWalkthrough(t *testing.T) {
	dataDir := t.TempDir()
	upRE := regexp.MustCompile(`admin token\s+(\S+)`)
	run := testenv.StartReadmeRun(t, upRE, []string{
		"ORDERFLOW_DEV_DATA=" + dataDir,
		// Set, and ignored: the dev mode's ledger and Redis are its own.
		"ORDERFLOW_MYSQL_DSN=root@tcp(127.0.0.1:3306)/test",
		"ORDERFLOW_REDIS_ADDR=127.0.0.1:6379",
	}, "go", "run", "./cmd/orderflow", "dev")
	token := upRE.FindStringSubmatch(run.Out.String())[1]
	if !strings.Contains(run.Out.String(), "demo catalogue: card product 1 (20 keys)") {
		t.Errorf("the banner names no seeded catalogue:\n%s", run.Out.String())
	}

	run.Walkthrough(t, token)

	// The seeded card product is untouched by the walkthrough: 20 keys.
	admin := &testenv.Client{Base: "http://" + run.API, Token: token}
	var product struct{ Stock int64 }
	if st := admin.Do(t, "GET", "/api/v1/admin/products/1", nil, &product); st != 200 || product.Stock != 20 {
		t.Errorf("seeded card product: status %d stock %d, want 200 and 20", st, product.Stock)
	}

	// The operator's views work on the embedded pair too: stats (the
	// ledger's aggregates) and the dashboard's API (asynq's inspector).
	for _, path := range []string{"/api/v1/admin/stats", "/monitoring/api/queues", "/monitoring/api/redis_info"} {
		if st := admin.Do(t, "GET", path, nil, nil); st != 200 {
			t.Errorf("GET %s = %d, want 200", path, st)
		}
	}

	pids := groupPids(t, run.Pid())
	ports := remotePorts(t, pids)
	if len(pids) < 2 || len(ports) == 0 {
		t.Fatalf("found %d processes and remote ports %v: the socket census sees nothing", len(pids), ports)
	}
	for _, shared := range []int{3306, 6379} {
		if ports[shared] {
			t.Errorf("the dev process group %v holds a connection to port %d", pids, shared)
		}
	}

	// Ctrl-C: the group gets SIGINT and the server stops cleanly. (`go run`
	// itself exits 1 when interrupted, whatever its child did; the built
	// binary's exit 0 is checked by the restart test.)
	if err := run.SignalGroup(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	run.WaitExit(t, 30*time.Second)
	if !strings.Contains(run.Out.String(), "orderflow dev: stopping") {
		t.Errorf("no clean stop in the output:\n%s", run.Out.String())
	}
	testenv.Eventually(t, 10*time.Second, "every process of the group gone", func() (bool, error) {
		return len(groupPids(t, run.Pid())) == 0, nil
	})
	var st struct {
		AdminToken string `json:"admin_token"`
	}
	b, err := os.ReadFile(filepath.Join(dataDir, "dev.json"))
	if err != nil || json.Unmarshal(b, &st) != nil || st.AdminToken != token {
		t.Errorf("dev.json keeps admin token %q (err %v), want the printed %q", st.AdminToken, err, token)
	}
}
