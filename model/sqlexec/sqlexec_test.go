package sqlexec

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"
)

// rig is one case's engine on one backend, with a table of its own keys:
// items(id, k unique, n).
type rig struct {
	ctx context.Context
	s   *Session
	// server: MariaDB underneath (the mariadb and mysql backends), where a
	// transaction is driven by statements on one connection.
	server bool
	// reopen is another Session on the same database, of maxOpen
	// connections, on the same dialect path as s.
	reopen func(t *testing.T, maxOpen int) *Session
	prefix string // every key the case writes starts with it
	got    [][]any
}

// key is the case's key named name.
func (r *rig) key(name string) string { return r.prefix + name }

func (r *rig) insert(t *testing.T, name string) {
	t.Helper()
	if _, err := r.s.Exec(r.ctx, `INSERT INTO items (k) VALUES (?)`, r.key(name)); err != nil {
		t.Fatal(err)
	}
}

// keys lists the case's committed keys, in key order, without the prefix.
func (r *rig) keys(t *testing.T) []string {
	t.Helper()
	var ks []string
	if err := r.s.All(r.ctx, &ks, `SELECT k FROM items WHERE k LIKE ? ORDER BY k`, r.prefix+"%"); err != nil {
		t.Fatal(err)
	}
	for i := range ks {
		ks[i] = strings.TrimPrefix(ks[i], r.prefix)
	}
	return ks
}

// wantKeys checks the committed keys and, on a server, that the pool's one
// connection came back with no transaction open.
func (r *rig) wantKeys(t *testing.T, want ...string) {
	t.Helper()
	if diff := cmp.Diff(want, r.keys(t)); diff != "" {
		t.Errorf("committed keys (-want +got):\n%s", diff)
	}
	if r.server {
		var n int
		if err := r.s.First(r.ctx, &n, `SELECT @@in_transaction`); err != nil || n != 0 {
			t.Errorf("@@in_transaction = %d (err %v) after the transaction, want 0", n, err)
		}
	}
}

// engineCase is one behaviour every backend must show.
type engineCase struct {
	name string
	// serverOnly: the case needs MariaDB underneath (a deadlock, SLEEP).
	serverOnly bool
	run        func(t *testing.T, r *rig)
}

var errBoom = errors.New("boom")

var engineCases = []engineCase{
	{name: "a commit keeps every write, held ones included", run: func(t *testing.T, r *rig) {
		err := r.s.InTx(r.ctx, func(tx *Session) error {
			if id, err := tx.Insert(r.ctx, `INSERT INTO items (k) VALUES (?)`, r.key("a")); err != nil || id == 0 {
				return errors.Join(err, fmt.Errorf("insert id %d", id))
			}
			if err := tx.Later(r.ctx, `INSERT INTO items (k) VALUES (?)`, r.key("b")); err != nil {
				return err
			}
			return tx.LaterExpect(r.ctx, "item a", 1, `UPDATE items SET n = 1 WHERE k = ?`, r.key("a"))
		})
		if err != nil {
			t.Fatal(err)
		}
		r.wantKeys(t, "a", "b")
	}},
	{name: "an error rolls everything back", run: func(t *testing.T, r *rig) {
		err := r.s.InTx(r.ctx, func(tx *Session) error {
			if _, err := tx.Exec(r.ctx, `INSERT INTO items (k) VALUES (?)`, r.key("a")); err != nil {
				return err
			}
			if err := tx.Later(r.ctx, `INSERT INTO items (k) VALUES (?)`, r.key("b")); err != nil {
				return err
			}
			return errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("InTx = %v, want boom", err)
		}
		r.wantKeys(t)
	}},
	{name: "a panic rolls everything back", run: func(t *testing.T, r *rig) {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatal("the panic did not reach the caller")
				}
			}()
			_ = r.s.InTx(r.ctx, func(tx *Session) error {
				if _, err := tx.Exec(r.ctx, `INSERT INTO items (k) VALUES (?)`, r.key("a")); err != nil {
					return err
				}
				panic("mid-transaction")
			})
		}()
		r.wantKeys(t)
	}},
	{name: "a held statement's failure surfaces at the next statement", run: func(t *testing.T, r *rig) {
		r.insert(t, "taken")
		var laterErr error
		err := r.s.InTx(r.ctx, func(tx *Session) error {
			if _, err := tx.Exec(r.ctx, `INSERT INTO items (k) VALUES (?)`, r.key("a")); err != nil {
				return err
			}
			if laterErr = tx.Later(r.ctx, `INSERT INTO items (k) VALUES (?)`, r.key("taken")); laterErr != nil {
				return laterErr
			}
			var n int64
			return tx.First(r.ctx, &n, `SELECT COUNT(*) FROM items`)
		})
		if !IsDuplicate(err) {
			t.Fatalf("InTx = %v, want the held statement's duplicate", err)
		}
		if r.server && laterErr != nil {
			t.Errorf("Later = %v on a server, want it held", laterErr)
		}
		r.wantKeys(t, "taken")
	}},
	{name: "a held statement's failure surfaces at COMMIT", run: func(t *testing.T, r *rig) {
		r.insert(t, "taken")
		err := r.s.InTx(r.ctx, func(tx *Session) error {
			var n int64
			if err := tx.First(r.ctx, &n, `SELECT COUNT(*) FROM items`); err != nil { // starts it
				return err
			}
			if err := tx.Later(r.ctx, `INSERT INTO items (k) VALUES (?)`, r.key("a")); err != nil {
				return err
			}
			return tx.Later(r.ctx, `INSERT INTO items (k) VALUES (?)`, r.key("taken"))
		})
		if !IsDuplicate(err) {
			t.Fatalf("InTx = %v, want the duplicate", err)
		}
		if r.server && !strings.HasPrefix(err.Error(), "commit: ") {
			t.Errorf("InTx = %q, want it from the COMMIT's batch", err)
		}
		r.wantKeys(t, "taken")
	}},
	{name: "InsertIgnoringDuplicate answers for its own statement only", run: func(t *testing.T, r *rig) {
		r.insert(t, "taken")
		err := r.s.InTx(r.ctx, func(tx *Session) error {
			if err := tx.Later(r.ctx, `INSERT INTO items (k) VALUES (?)`, r.key("a")); err != nil {
				return err
			}
			for name, want := range map[string]bool{"taken": false, "b": true} {
				if added, err := tx.InsertIgnoringDuplicate(r.ctx, `INSERT INTO items (k) VALUES (?)`, r.key(name)); err != nil || added != want {
					return fmt.Errorf("insert %s: added %v err %v, want %v", name, added, err, want)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		r.wantKeys(t, "a", "b", "taken")
		// A held statement's violation is not taken for "already there".
		err = r.s.InTx(r.ctx, func(tx *Session) error {
			if err := tx.Later(r.ctx, `INSERT INTO items (k) VALUES (?)`, r.key("a")); err != nil {
				return err
			}
			_, err := tx.InsertIgnoringDuplicate(r.ctx, `INSERT INTO items (k) VALUES (?)`, r.key("c"))
			return err
		})
		if !IsDuplicate(err) {
			t.Fatalf("InTx = %v, want the held statement's duplicate", err)
		}
		r.wantKeys(t, "a", "b", "taken")
	}},
	{name: "an unmet expectation fails the transaction with ErrUnmet, nothing committed", run: func(t *testing.T, r *rig) {
		err := r.s.InTx(r.ctx, func(tx *Session) error {
			if err := tx.Later(r.ctx, `INSERT INTO items (k) VALUES (?)`, r.key("before")); err != nil {
				return err
			}
			if err := tx.LaterExpect(r.ctx, "item 'missing'?", 1, `UPDATE items SET n = 1 WHERE k = ?`, r.key("missing")); err != nil {
				return err
			}
			return tx.Later(r.ctx, `INSERT INTO items (k) VALUES (?)`, r.key("after"))
		})
		if !errors.Is(err, ErrUnmet) {
			t.Fatalf("InTx = %v, want ErrUnmet", err)
		}
		if !strings.Contains(err.Error(), "item 'missing'") {
			t.Errorf("error %q does not name the check", err)
		}
		r.wantKeys(t)
	}},
	{name: "an exact expectation fails on more rows and holds on as many", run: func(t *testing.T, r *rig) {
		r.insert(t, "a")
		r.insert(t, "b")
		for _, n := range []int64{1, 2} {
			err := r.s.InTx(r.ctx, func(tx *Session) error {
				return tx.LaterExpectExactly(r.ctx, "both", n, `UPDATE items SET n = n + 1 WHERE k LIKE ?`, r.prefix+"%")
			})
			if met := err == nil; met != (n == 2) || (err != nil && !errors.Is(err, ErrUnmet)) {
				t.Fatalf("expect exactly %d: %v", n, err)
			}
		}
		var sum int64
		if err := r.s.First(r.ctx, &sum, `SELECT SUM(n) FROM items WHERE k LIKE ?`, r.prefix+"%"); err != nil || sum != 2 {
			t.Errorf("sum of n = %d (err %v), want 2: only the met update stays", sum, err)
		}
	}},
	{name: "after-commit items go once, in order, after COMMIT", run: func(t *testing.T, r *rig) {
		err := r.s.InTx(r.ctx, func(tx *Session) error {
			tx.AfterCommit(r.ctx, "a")
			if err := tx.Later(r.ctx, `INSERT INTO items (k) VALUES (?)`, r.key("a")); err != nil {
				return err
			}
			if len(r.got) != 0 {
				t.Error("items handed over before the COMMIT")
			}
			tx.AfterCommit(r.ctx, "b")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		r.s.AfterCommit(r.ctx, "on the pool")
		if diff := cmp.Diff([][]any{{"a", "b"}, {"on the pool"}}, r.got); diff != "" {
			t.Errorf("after-commit items (-want +got):\n%s", diff)
		}
	}},
	{name: "no after-commit items after a rollback, an unmet check or a failed COMMIT", run: func(t *testing.T, r *rig) {
		r.insert(t, "taken")
		for name, fn := range map[string]func(tx *Session) error{
			"rollback": func(tx *Session) error { return errBoom },
			"unmet": func(tx *Session) error {
				return tx.LaterExpect(r.ctx, "none", 1, `UPDATE items SET n = 1 WHERE k = ?`, r.key("missing"))
			},
			"failed commit": func(tx *Session) error {
				return tx.Later(r.ctx, `INSERT INTO items (k) VALUES (?)`, r.key("taken"))
			},
		} {
			err := r.s.InTx(r.ctx, func(tx *Session) error {
				tx.AfterCommit(r.ctx, name)
				return fn(tx)
			})
			if err == nil {
				t.Errorf("%s: the transaction committed", name)
			}
		}
		if len(r.got) != 0 {
			t.Errorf("items handed over: %v", r.got)
		}
	}},
	{name: "a nested InTx joins the outer transaction", run: func(t *testing.T, r *rig) {
		err := r.s.InTx(r.ctx, func(tx *Session) error {
			tx.AfterCommit(r.ctx, "outer")
			if err := tx.Later(r.ctx, `INSERT INTO items (k) VALUES (?)`, r.key("outer")); err != nil {
				return err
			}
			return tx.InTx(r.ctx, func(tx *Session) error {
				tx.AfterCommit(r.ctx, "inner")
				return tx.Later(r.ctx, `INSERT INTO items (k) VALUES (?)`, r.key("inner"))
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		r.wantKeys(t, "inner", "outer")
		if diff := cmp.Diff([][]any{{"outer", "inner"}}, r.got); diff != "" {
			t.Errorf("after-commit items (-want +got):\n%s", diff)
		}
	}},
	{name: "a transaction that runs nothing sends nothing", run: func(t *testing.T, r *rig) {
		if err := r.s.InTx(r.ctx, func(*Session) error { return nil }); err != nil {
			t.Fatal(err)
		}
		r.wantKeys(t)
	}},
	{name: "duplicate keys are told from other errors", run: func(t *testing.T, r *rig) {
		r.insert(t, "a")
		var id int64
		if err := r.s.First(r.ctx, &id, `SELECT id FROM items WHERE k = ?`, r.key("a")); err != nil {
			t.Fatal(err)
		}
		for name, c := range map[string]struct {
			query string
			args  []any
			dup   bool
		}{
			"unique key":  {`INSERT INTO items (k) VALUES (?)`, []any{r.key("a")}, true},
			"primary key": {`INSERT INTO items (id, k) VALUES (?, ?)`, []any{id, r.key("b")}, true},
			"no table":    {`INSERT INTO no_such_table (k) VALUES (?)`, []any{r.key("c")}, false},
		} {
			_, err := r.s.Exec(r.ctx, c.query, c.args...)
			if err == nil || IsDuplicate(err) != c.dup {
				t.Errorf("%s: %v, want an error, duplicate %v", name, err, c.dup)
			}
		}
		if IsDuplicate(nil) {
			t.Error("nil is a duplicate")
		}
		var n int64
		if err := r.s.First(r.ctx, &n, `SELECT id FROM items WHERE k = ?`, r.key("none")); !errors.Is(err, ErrNotFound) {
			t.Errorf("First of no row = %v, want ErrNotFound", err)
		}
	}},
	{name: "the caller's deadline does not cut the COMMIT short", serverOnly: true, run: func(t *testing.T, r *rig) {
		// A held statement that takes 300 ms rides with the COMMIT; the
		// deadline passes meanwhile. Cancelling then would close the socket
		// while the server goes on to commit: here it commits, and says so.
		ctx, cancel := context.WithTimeout(r.ctx, 100*time.Millisecond)
		defer cancel()
		err := r.s.InTx(ctx, func(tx *Session) error {
			var n int64
			if err := tx.First(ctx, &n, `SELECT COUNT(*) FROM items`); err != nil { // starts it
				return err
			}
			if err := tx.Later(ctx, `DO SLEEP(0.3)`); err != nil {
				return err
			}
			return tx.Later(ctx, `INSERT INTO items (k) VALUES (?)`, r.key("a"))
		})
		if err != nil {
			t.Fatal(err)
		}
		r.wantKeys(t, "a")
	}},
	{name: "a lost deadlock re-runs the transaction", serverOnly: true, run: func(t *testing.T, r *rig) {
		r.insert(t, "a")
		r.insert(t, "b")
		s := r.reopen(t, 2)
		retries := Retries()
		// Each locks its first row, waits until the other has locked its
		// own, then asks for the other's: InnoDB fails one of the two with a
		// deadlock, and its re-run (no waiting then) goes after the other.
		locked := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
		errs := make(chan error, 2)
		for i, order := range [2][2]string{{"a", "b"}, {"b", "a"}} {
			go func() {
				attempt := 0
				errs <- s.InTx(r.ctx, func(tx *Session) error {
					attempt++
					if _, err := tx.Exec(r.ctx, `UPDATE items SET n = n + 1 WHERE k = ?`, r.key(order[0])); err != nil {
						return err
					}
					if attempt == 1 {
						close(locked[i])
						<-locked[1-i]
					}
					_, err := tx.Exec(r.ctx, `UPDATE items SET n = n + 1 WHERE k = ?`, r.key(order[1]))
					return err
				})
			}()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatalf("InTx = %v, want both to commit", err)
			}
		}
		if Retries() == retries {
			t.Error("no transaction was re-run")
		}
		var sum int64
		if err := r.s.First(r.ctx, &sum, `SELECT SUM(n) FROM items WHERE k LIKE ?`, r.prefix+"%"); err != nil || sum != 4 {
			t.Errorf("sum of n = %d (err %v), want 4: each transaction once", sum, err)
		}
	}},
	{name: "a lone statement expands an IN list", run: func(t *testing.T, r *rig) {
		for _, k := range []string{"a", "b", "c"} {
			r.insert(t, k)
		}
		n, err := r.s.Exec(r.ctx, `UPDATE items SET n = 1 WHERE k IN ?`, []string{r.key("a"), r.key("c")})
		if err != nil || n != 2 {
			t.Fatalf("Exec = %d, %v; want 2 rows", n, err)
		}
	}},
	{name: "a lone statement that lost a deadlock is re-run", serverOnly: true, run: func(t *testing.T, r *rig) {
		ns, lone := loseADeadlock(t, r, `UPDATE items SET n = n + 1 WHERE k IN (?, ?) ORDER BY k`, r.key("a"), r.key("b"))
		if lone != nil {
			t.Fatalf("lone UPDATE = %v, want it re-run after the deadlock it lost", lone)
		}
		if diff := cmp.Diff([]int{2, 2, 1, 1, 1, 1, 0}, ns); diff != "" {
			t.Errorf("n by key a…g (-want +got): each write once\n%s", diff)
		}
	}},
	{name: "a batch on the pool that lost a deadlock is not re-run", serverOnly: true, run: func(t *testing.T, r *rig) {
		// Its first statement committed on its own before the second lost:
		// running the batch again would apply the first twice.
		ns, lone := loseADeadlock(t, r, "UPDATE items SET n = n + 1 WHERE k = ?;\nUPDATE items SET n = n + 1 WHERE k IN (?, ?) ORDER BY k",
			r.key("g"), r.key("a"), r.key("b"))
		if mysqlErrno(lone) != 1213 {
			t.Fatalf("batch = %v, want the deadlock it lost returned", lone)
		}
		if diff := cmp.Diff([]int{1, 1, 1, 1, 1, 1, 1}, ns); diff != "" {
			t.Errorf("n by key a…g (-want +got): g once, a and b by the transaction alone\n%s", diff)
		}
	}},
}

// loseADeadlock runs query alone on the pool (r.s) so that it loses a
// deadlock, and returns n of the case's keys a…g afterwards and its error.
// A transaction on another connection changes c…f, then b; query must take
// a and then wait for b; then the transaction asks for a. InnoDB fails the
// smaller of the two — query, which changed one row — and on Galera a
// certification failure ends a lone statement the same way.
func loseADeadlock(t *testing.T, r *rig, query string, args ...any) ([]int, error) {
	t.Helper()
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		r.insert(t, k)
	}
	s := r.reopen(t, 1)
	holdsB, loneWaits := make(chan struct{}), make(chan struct{})
	txErr := make(chan error, 1)
	go func() {
		attempt := 0
		txErr <- s.InTx(r.ctx, func(tx *Session) error {
			attempt++
			if _, err := tx.Exec(r.ctx, `UPDATE items SET n = n + 1 WHERE k IN (?, ?, ?, ?, ?)`,
				r.key("c"), r.key("d"), r.key("e"), r.key("f"), r.key("b")); err != nil {
				return err
			}
			if attempt == 1 {
				close(holdsB)
				<-loneWaits
			}
			_, err := tx.Exec(r.ctx, `UPDATE items SET n = n + 1 WHERE k = ?`, r.key("a"))
			return err
		})
	}()
	<-holdsB
	lone := make(chan error, 1)
	go func() {
		_, err := r.s.Exec(r.ctx, query, args...)
		lone <- err
	}()
	waitForALockWait(t, r.reopen(t, 1))
	close(loneWaits)
	if err := <-txErr; err != nil {
		t.Fatalf("InTx = %v", err)
	}
	err := <-lone
	var ns []int
	if err := r.s.All(r.ctx, &ns, `SELECT n FROM items WHERE k LIKE ? ORDER BY k`, r.prefix+"%"); err != nil {
		t.Fatal(err)
	}
	return ns, err
}

// waitForALockWait polls the server until some transaction waits for a
// row lock.
func waitForALockWait(t *testing.T, s *Session) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		var n int
		if err := s.First(context.Background(), &n, `SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'`); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
	}
	t.Fatal("no transaction waited for a lock within 10 s")
}

// TestEngine runs every case on SQLite, on MariaDB, and on MariaDB through
// the MySQL path (checks in Go, held statements as a plain batch, no
// BEGIN NOT ATOMIC).
func TestEngine(t *testing.T) {
	backends := openBackends(t)
	for _, b := range []string{"sqlite", "mariadb", "mysql"} {
		for i, c := range engineCases {
			t.Run(b+"/"+c.name, func(t *testing.T) {
				if c.serverOnly && b == "sqlite" {
					t.Skip("needs MariaDB underneath")
				}
				r := backends[b](t)
				r.prefix = fmt.Sprintf("%s-%d-", b, i)
				r.s.SetAfterCommit(func(_ context.Context, items []any) { r.got = append(r.got, items) })
				c.run(t, r)
			})
		}
	}
}

// openBackends opens the three backends, each a func giving a case its rig:
// SQLite in memory, and one MariaDB database of the test's own (created and
// dropped here) that the mariadb and mysql backends share.
func openBackends(t *testing.T) map[string]func(t *testing.T) *rig {
	t.Helper()
	lite, err := OpenSQLite(":memory:", PoolConfig{MaxOpen: 1}) // one connection: one in-memory database
	if err != nil {
		t.Fatal(err)
	}
	closeAtEnd(t, lite)
	createItems(t, lite, `CREATE TABLE items (id INTEGER PRIMARY KEY AUTOINCREMENT, k TEXT NOT NULL UNIQUE, n INTEGER NOT NULL DEFAULT 0)`)

	dsn := serverDatabase(t)
	open := func(t *testing.T, maxOpen int) *gorm.DB {
		db, err := Open(dsn, PoolConfig{MaxOpen: maxOpen, MaxIdle: maxOpen})
		if err != nil {
			t.Fatal(err)
		}
		closeAtEnd(t, db)
		return db
	}
	// One connection: a case's checks run on the very connection its
	// transaction used.
	server := open(t, 1)
	createItems(t, server, `CREATE TABLE items (id BIGINT PRIMARY KEY AUTO_INCREMENT, k VARCHAR(64) NOT NULL UNIQUE, n INT NOT NULL DEFAULT 0)`)
	if !DialectOf(server).MariaDB {
		t.Fatal("the test server is not MariaDB")
	}
	onServer := func(asMySQL bool) func(t *testing.T) *rig {
		session := func(db *gorm.DB) *Session {
			if asMySQL {
				return New(db).AsMySQL()
			}
			return New(db)
		}
		return func(t *testing.T) *rig {
			return &rig{ctx: context.Background(), s: session(server), server: true,
				reopen: func(t *testing.T, maxOpen int) *Session { return session(open(t, maxOpen)) }}
		}
	}
	return map[string]func(t *testing.T) *rig{
		"sqlite":  func(t *testing.T) *rig { return &rig{ctx: context.Background(), s: New(lite)} },
		"mariadb": onServer(false),
		"mysql":   onServer(true),
	}
}

// serverDatabase creates a database of the test's own on the MariaDB
// server (ORDERFLOW_TEST_MYSQL, root@127.0.0.1:3306 by default), drops it
// when the test ends, and returns its DSN.
func serverDatabase(t *testing.T) string {
	t.Helper()
	server := os.Getenv("ORDERFLOW_TEST_MYSQL")
	if server == "" {
		server = "root@tcp(127.0.0.1:3306)/"
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	name := "sqlexec_" + hex.EncodeToString(r[:])
	dsn := server + name
	if err := EnsureDatabase(dsn); err != nil {
		t.Fatal(err)
	}
	admin, err := Open(server, PoolConfig{MaxOpen: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP DATABASE IF EXISTS " + name)
		if sqlDB, err := admin.DB(); err == nil {
			sqlDB.Close()
		}
	})
	return dsn
}

func createItems(t *testing.T, db *gorm.DB, ddl string) {
	t.Helper()
	if err := db.Exec(ddl).Error; err != nil {
		t.Fatal(err)
	}
}

func closeAtEnd(t *testing.T, db *gorm.DB) {
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			sqlDB.Close()
		}
	})
}

// TestRetry: a transaction that lost a deadlock or a lock wait is tried
// again, at most maxTxAttempts times and counted; a lone statement only
// after a loss that took no waiting; any other error ends it at once.
func TestRetry(t *testing.T) {
	for _, c := range []struct {
		name string
		lost func(error) bool
		err  error
		runs int
	}{
		{"transaction, deadlock", isRetryable, &mysqlErr1213, maxTxAttempts},
		{"transaction, lock wait", isRetryable, &mysqlErr1205, maxTxAttempts},
		{"transaction, other", isRetryable, errBoom, 1},
		{"transaction, none", isRetryable, nil, 1},
		{"lone statement, deadlock", lostAlone, &mysqlErr1213, maxTxAttempts},
		{"lone statement, lock wait", lostAlone, &mysqlErr1205, 1},
		{"lone statement, other", lostAlone, errBoom, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			before, runs := Retries(), 0
			err := retry(context.Background(), c.lost, func() error { runs++; return c.err })
			if runs != c.runs || !errors.Is(err, c.err) {
				t.Errorf("ran %d times, returned %v; want %d and %v", runs, err, c.runs, c.err)
			}
			if got := Retries() - before; got != int64(c.runs-1) {
				t.Errorf("counted %d retries, want %d", got, c.runs-1)
			}
		})
	}
}

var (
	mysqlErr1213 = mysql.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock"}
	mysqlErr1205 = mysql.MySQLError{Number: 1205, Message: "Lock wait timeout exceeded"}
)
