package devmode_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	api := "127.0.0.1:" + strconv.Itoa(testenv.SparePort(t))
	paysim := "127.0.0.1:" + strconv.Itoa(testenv.SparePort(t))
	env := append(os.Environ(),
		"ORDERFLOW_DEV_DATA="+t.TempDir(),
		"ORDERFLOW_API_ADDR="+api,
		"ORDERFLOW_QUEUE_ADDR=127.0.0.1:"+strconv.Itoa(testenv.SparePort(t)),
		"ORDERFLOW_PAYSIM_ADDR="+paysim,
		// Set, and ignored: the dev mode's ledger and Redis are its own.
		"ORDERFLOW_MYSQL_DSN=root@tcp(127.0.0.1:3306)/test",
		"ORDERFLOW_REDIS_ADDR=127.0.0.1:6379",
	)
	cmd := exec.Command("go", "run", "./cmd/orderflow", "dev")
	cmd.Dir, cmd.Env = root, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	run := testenv.StartChild(t, cmd)
	t.Cleanup(func() { _ = syscall.Kill(-run.Pid(), syscall.SIGKILL) })

	var token string
	testenv.Eventually(t, 3*time.Minute, "the dev command prints that orderflow is up", func() (bool, error) {
		if run.Exited() {
			return false, fmt.Errorf("exited early:\n%s", run.Out.String())
		}
		m := regexp.MustCompile(`admin token\s+(\S+)`).FindStringSubmatch(run.Out.String())
		if m != nil {
			token = m[1]
		}
		return m != nil, nil
	})
	if !strings.Contains(run.Out.String(), "demo catalogue: card product 1 (20 keys)") {
		t.Errorf("the banner names no seeded catalogue:\n%s", run.Out.String())
	}
	resp, err := http.Get("http://" + api + "/readyz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("readyz: %v %v", resp, err)
	}
	resp.Body.Close()

	testenv.Walkthrough(t, root, env, api, paysim, token)

	// The seeded card product is untouched by the walkthrough: 20 keys.
	admin := &testenv.Client{Base: "http://" + api, Token: token}
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
	if err := syscall.Kill(-run.Pid(), syscall.SIGINT); err != nil {
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
	b, err := os.ReadFile(filepath.Join(envValue(env, "ORDERFLOW_DEV_DATA"), "dev.json"))
	if err != nil || json.Unmarshal(b, &st) != nil || st.AdminToken != token {
		t.Errorf("dev.json keeps admin token %q (err %v), want the printed %q", st.AdminToken, err, token)
	}
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}
