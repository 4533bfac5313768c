//go:build ha

// Package ha holds the tests that need a real Galera cluster: certification
// conflicts between two nodes, and the ledger's statements under Galera.
// They run with `make test-ha` (build tag ha), never in the fast tier; the
// whole-system HA run is cmd/chaos -ha.
package ha

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"orderflow/model"
	"orderflow/tests/chaos"
)

// cluster is the package's three-node Galera cluster.
var cluster *chaos.Galera

type stdout struct{}

func (stdout) Printf(format string, args ...any) { fmt.Printf("[ha] "+format+"\n", args...) }

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "orderflow-ha-test-")
	if err != nil {
		fmt.Println(err)
		return 2
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cluster, err = chaos.StartGalera(ctx, dir, dir, 3, stdout{})
	if cluster != nil {
		defer cluster.Stop()
	}
	if err != nil {
		fmt.Println("start galera:", err, "— logs in", dir)
		return 2
	}
	if err := model.EnsureDatabase(cluster.DSN(0, "orderflow")); err != nil {
		fmt.Println("create database:", err)
		return 2
	}
	db, err := model.Open(cluster.DSN(0, "orderflow"), model.PoolConfig{MaxOpen: 2})
	if err == nil {
		_, err = model.Migrate(ctx, db)
	}
	if err != nil {
		fmt.Println("migrate on galera:", err)
		return 2
	}
	return m.Run()
}
