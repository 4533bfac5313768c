package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Printer receives progress lines.
type Printer interface {
	Printf(format string, args ...any)
}

// Galera is a private MariaDB Galera cluster: one mariadbd per node on
// spare ports (client, group communication, IST, SST), each with its own
// data directory, started as child processes. Joiners receive their state by
// mariadb-backup SST (docs/ha.md says why not rsync).
type Galera struct {
	nodes []*galeraNode
	out   Printer
}

type galeraNode struct {
	port    int
	datadir string
	proc    *proc
}

// galeraProvider finds the galera-4 provider library.
func galeraProvider() (string, error) {
	for _, p := range []string{"/usr/lib/galera/libgalera_smm.so", "/usr/lib/libgalera_smm.so",
		"/usr/lib/x86_64-linux-gnu/galera/libgalera_smm.so", "/usr/lib64/galera-4/libgalera_smm.so"} {
		if fileExists(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("libgalera_smm.so not found: apt-get install galera-4 mariadb-backup")
}

// StartGalera initialises n data directories under dir, bootstraps the first
// node, then joins the others one by one (each by SST). The nodes' logs go
// to logdir.
func StartGalera(ctx context.Context, dir, logdir string, n int, out Printer) (*Galera, error) {
	provider, err := galeraProvider()
	if err != nil {
		return nil, err
	}
	if _, err := findBinary("mariadb-backup"); err != nil {
		return nil, fmt.Errorf("SST needs mariadb-backup: %w", err)
	}
	server, install, err := mariadbBinaries()
	if err != nil {
		return nil, err
	}
	taken := map[int]bool{}
	type ports struct{ client, gcomm, ist, sst int }
	ps := make([]ports, n)
	var members []string
	for i := range ps {
		for _, p := range []*int{&ps[i].client, &ps[i].gcomm, &ps[i].ist, &ps[i].sst} {
			if *p, err = sparePort(taken); err != nil {
				return nil, err
			}
		}
		members = append(members, "127.0.0.1:"+strconv.Itoa(ps[i].gcomm))
	}
	g := &Galera{out: out}
	for i, p := range ps {
		datadir := filepath.Join(dir, fmt.Sprintf("galera-%d", i+1))
		if out, err := exec.Command(install, "--no-defaults", "--datadir="+datadir,
			"--auth-root-authentication-method=normal", "--skip-test-db", "--user="+currentUser()).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("mariadb-install-db: %v\n%s", err, out)
		}
		// Options mariadb-backup does not know (the buffer pool's size, say)
		// stay out: the SST script passes the server's arguments on to it.
		args := []string{
			"--no-defaults", "--datadir=" + datadir, "--port=" + strconv.Itoa(p.client),
			"--socket=" + filepath.Join(datadir, "mysqld.sock"), "--bind-address=127.0.0.1",
			"--user=" + currentUser(), "--skip-name-resolve", "--max-connections=600",
			"--pid-file=" + filepath.Join(datadir, "mysqld.pid"),
			"--binlog-format=ROW", "--default-storage-engine=InnoDB", "--innodb-autoinc-lock-mode=2",
			"--wsrep-on=ON", "--wsrep-provider=" + provider, "--wsrep-cluster-name=orderflow-ha",
			"--wsrep-node-name=node-" + strconv.Itoa(i+1),
			"--wsrep-node-address=127.0.0.1:" + strconv.Itoa(p.gcomm),
			// Short failure detection: a killed node leaves the view in ~3 s.
			"--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:" + strconv.Itoa(p.gcomm) +
				";ist.recv_addr=127.0.0.1:" + strconv.Itoa(p.ist) +
				";gcache.size=128M;evs.suspect_timeout=PT3S;evs.inactive_timeout=PT6S;evs.keepalive_period=PT1S",
			"--wsrep-sst-receive-address=127.0.0.1:" + strconv.Itoa(p.sst),
			"--wsrep-sst-method=mariabackup", "--wsrep-sst-auth=root:",
			"--wsrep-cluster-address=gcomm://" + strings.Join(members, ","),
		}
		name := fmt.Sprintf("galera-%d", i+1)
		g.nodes = append(g.nodes, &galeraNode{port: p.client, datadir: datadir,
			proc: newProc(name, server, args, os.Environ(), filepath.Join(logdir, name+".log"))})
	}
	// The first node forms the cluster; only its first start may say so, or
	// a restart would found a second cluster beside the first.
	first := g.nodes[0].proc
	boot := first.args
	first.args = append(slices.Clone(boot), "--wsrep-new-cluster")
	err = first.Start()
	first.args = boot
	if err != nil {
		return g, err
	}
	for i, nd := range g.nodes {
		if i > 0 {
			if err := nd.proc.Start(); err != nil {
				return g, err
			}
		}
		start := time.Now()
		if err := g.WaitReady(ctx, i, 120*time.Second); err != nil {
			return g, err
		}
		out.Printf("galera node %d ready on :%d after %s", i+1, nd.port, time.Since(start).Round(100*time.Millisecond))
	}
	return g, nil
}

// Len is the number of nodes.
func (g *Galera) Len() int { return len(g.nodes) }

// Addr is node i's client address.
func (g *Galera) Addr(i int) string { return "127.0.0.1:" + strconv.Itoa(g.nodes[i].port) }

// DSN is a DSN for node i alone.
func (g *Galera) DSN(i int, db string) string {
	return fmt.Sprintf("root@tcp(%s)/%s?timeout=2s&readTimeout=10s&writeTimeout=10s", g.Addr(i), db)
}

// ListDSN is a DSN listing the given addresses in order (model/sqlexec/nodes.go):
// a process's own node first.
func ListDSN(addrs []string, db, extra string) string {
	return fmt.Sprintf("root@tcp(%s)/%s?timeout=2s&readTimeout=10s&writeTimeout=10s%s", strings.Join(addrs, ","), db, extra)
}

// Kill9 kills node i; the supervisor does not start it again until Rejoin.
func (g *Galera) Kill9(i int) { g.nodes[i].proc.Kill9() }

// Rejoin starts node i again (it rejoins by SST or IST) and waits until it
// is ready.
func (g *Galera) Rejoin(ctx context.Context, i int, within time.Duration) error {
	if err := g.nodes[i].proc.Start(); err != nil {
		return err
	}
	return g.WaitReady(ctx, i, within)
}

// WaitReady polls node i until it is a synced member (wsrep_ready=ON).
func (g *Galera) WaitReady(ctx context.Context, i int, within time.Duration) error {
	db, err := openPolling(fmt.Sprintf("root@tcp(%s)/", g.Addr(i)))
	if err != nil {
		return err
	}
	defer db.Close()
	return pollReady(ctx, within, 200*time.Millisecond, fmt.Sprintf("galera node %d", i+1), func(ctx context.Context) error {
		var name, ready string
		if err := db.QueryRowContext(ctx, "SHOW STATUS LIKE 'wsrep_ready'").Scan(&name, &ready); err != nil {
			return err
		}
		if ready != "ON" {
			return fmt.Errorf("wsrep_ready=%s", ready)
		}
		return nil
	})
}

// openPolling opens a pool on dsn whose dials give up after a second, for
// polling a server that may not be up yet.
func openPolling(dsn string) (*sql.DB, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = time.Second
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(conn), nil
}

// ClusterSize is wsrep_cluster_size as node i sees it.
func (g *Galera) ClusterSize(ctx context.Context, i int) (int, error) {
	db, err := sql.Open("mysql", g.DSN(i, ""))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var name string
	var n int
	err = db.QueryRowContext(ctx, "SHOW STATUS LIKE 'wsrep_cluster_size'").Scan(&name, &n)
	return n, err
}

// procs are the nodes' processes.
func (g *Galera) procs() []*proc {
	var out []*proc
	for _, n := range g.nodes {
		out = append(out, n.proc)
	}
	return out
}

// Stop kills every node and removes the data directories.
func (g *Galera) Stop() {
	for _, n := range g.nodes {
		n.proc.Kill9()
		_ = os.RemoveAll(n.datadir)
	}
}
