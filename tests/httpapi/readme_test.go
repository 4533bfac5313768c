package httpapi

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"orderflow/internal/testenv"
)

// TestReadmeRunCommandAndWalkthrough is what an operator does: the README's
// production run command (scripts/run.sh, behind `make run-mysql`) brings the
// system up on MariaDB and Redis, and the README's walkthrough
// (scripts/walkthrough.sh) takes an order from created to finished. It runs
// on its own database, Redis DB and ports. (dev/readme_test.go does the same
// for `go run ./cmd/orderflow dev`.)
func TestReadmeRunCommandAndWalkthrough(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cfg := testenv.Config(t)
	ports := make([]int, 3)
	for i := range ports {
		ports[i] = testenv.SparePort(t)
	}
	api := "127.0.0.1:" + strconv.Itoa(ports[0])
	paysim := "127.0.0.1:" + strconv.Itoa(ports[2])
	env := append(os.Environ(),
		"ORDERFLOW_MYSQL_DSN="+cfg.MySQLDSN,
		"ORDERFLOW_REDIS_DB="+strconv.Itoa(cfg.RedisDB),
		"ORDERFLOW_ADMIN_TOKEN=readme-admin-token-0123",
		"ORDERFLOW_API_ADDR="+api,
		"ORDERFLOW_QUEUE_ADDR=127.0.0.1:"+strconv.Itoa(ports[1]),
		"ORDERFLOW_PAYSIM_ADDR="+paysim,
	)
	run := exec.Command("./scripts/run.sh")
	run.Dir, run.Env = root, env
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &testenv.LockedBuffer{}
	run.Stdout, run.Stderr = out, out
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- run.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-run.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-run.Process.Pid, syscall.SIGKILL)
		}
		if t.Failed() {
			t.Logf("run.sh output:\n%s", out.String())
		}
	})
	testenv.Eventually(t, 3*time.Minute, "run.sh prints that orderflow is up", func() (bool, error) {
		select {
		case err := <-exited:
			return false, fmt.Errorf("run.sh exited early: %v", err)
		default:
		}
		return strings.Contains(out.String(), "orderflow is up"), nil
	})
	resp, err := http.Get("http://" + api + "/readyz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("readyz after run.sh: %v %v", resp, err)
	}
	resp.Body.Close()

	testenv.Walkthrough(t, root, env, api, paysim, "readme-admin-token-0123")
}
