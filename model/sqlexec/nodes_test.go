package sqlexec

import (
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// A DSN listing nodes connects to the first that answers: here the first
// refuses (nothing listens on port 1), so every connection goes to the
// second, and the ledger works through it.
func TestNodeListSkipsADeadNode(t *testing.T) {
	dsn := serverDatabase(t)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	listed := strings.Replace(dsn, "@tcp(", "@tcp(127.0.0.1:1,", 1)
	db, err := Open(listed, PoolConfig{MaxOpen: 4})
	if err != nil {
		t.Fatalf("open %s: %v", listed, err)
	}
	sqlDB, _ := db.DB()
	defer sqlDB.Close()
	for range 3 {
		var name string
		if err := db.Raw("SELECT DATABASE()").Scan(&name).Error; err != nil {
			t.Fatal(err)
		}
		if name != cfg.DBName {
			t.Fatalf("connected to database %q, want %q", name, cfg.DBName)
		}
		sqlDB.SetMaxIdleConns(0) // each round dials again
	}
}

// With no node answering, Open fails and names every node.
func TestNodeListAllDown(t *testing.T) {
	_, err := Open("root@tcp(127.0.0.1:1,127.0.0.1:2)/x?timeout=1s", PoolConfig{})
	if err == nil {
		t.Fatal("open succeeded with no node up")
	}
	for _, n := range []string{"127.0.0.1:1", "127.0.0.1:2"} {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not name node %s", err, n)
		}
	}
}
