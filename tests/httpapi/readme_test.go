package httpapi

import (
	"regexp"
	"strconv"
	"testing"

	"orderflow/internal/testenv"
)

// TestReadmeRunCommandAndWalkthrough is what an operator does: the README's
// production run command (scripts/run.sh, behind `make run-mysql`) brings the
// system up on MariaDB and Redis, and the README's walkthrough
// (scripts/walkthrough.sh) takes an order from created to finished. It runs
// on its own database, Redis DB and ports. (dev/readme_test.go does the same
// for `go run ./cmd/orderflow dev`.)
func TestReadmeRunCommandAndWalkthrough(t *testing.T) {
	const token = "readme-admin-token-0123"
	cfg := testenv.Config(t)
	run := testenv.StartReadmeRun(t, regexp.MustCompile("orderflow is up"), []string{
		"ORDERFLOW_MYSQL_DSN=" + cfg.MySQLDSN,
		"ORDERFLOW_REDIS_DB=" + strconv.Itoa(cfg.RedisDB),
		"ORDERFLOW_ADMIN_TOKEN=" + token,
	}, "./scripts/run.sh")
	run.Walkthrough(t, token)
}
