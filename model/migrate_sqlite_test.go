package model

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// TestTranslateToSQLite: each MySQL form the migrations use, and the SQLite
// statements it becomes.
func TestTranslateToSQLite(t *testing.T) {
	for _, tc := range []struct{ name, mysql, want string }{{
		name: "create table: auto id, keys after the table, options gone, DATETIME(3), comments dropped",
		mysql: `-- +goose Up
-- why the table exists
CREATE TABLE things (
  id         BIGINT      NOT NULL AUTO_INCREMENT,
  -- the thing's code
  code       VARCHAR(32) NOT NULL DEFAULT 'a,b',
  seen_at    DATETIME(3) NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_things_code (code),
  KEY idx_things_seen (seen_at, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- +goose Down
DROP TABLE things;
`,
		want: `-- +goose Up
CREATE TABLE things (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  code       VARCHAR(32) NOT NULL DEFAULT 'a,b',
  seen_at    DATETIME NULL
);
CREATE UNIQUE INDEX uk_things_code ON things (code);
CREATE INDEX idx_things_seen ON things (seen_at, id);

-- +goose Down
DROP TABLE things;
`,
	}, {
		name:  "a composite primary key stays in the table",
		mysql: "CREATE TABLE pairs (\n  a BIGINT NOT NULL,\n  b CHAR(2) NOT NULL,\n  PRIMARY KEY (a, b)\n) ENGINE=InnoDB;\n",
		want:  "CREATE TABLE pairs (\n  a BIGINT NOT NULL,\n  b CHAR(2) NOT NULL,\n  PRIMARY KEY (a, b)\n);\n",
	}, {
		name: "alter table: one statement per clause, in order, AFTER gone",
		mysql: `ALTER TABLE refunds
  ADD COLUMN note VARCHAR(255) NOT NULL DEFAULT '' AFTER reason,
  ADD COLUMN paid_at DATETIME(3) NULL,
  DROP INDEX uk_refunds_order_trade,
  ADD UNIQUE KEY uk_refunds_base_no (base_no),
  ADD KEY idx_refunds_order (order_id);
ALTER TABLE refunds DROP KEY idx_refunds_order, DROP COLUMN note;
`,
		want: `ALTER TABLE refunds ADD COLUMN note VARCHAR(255) NOT NULL DEFAULT '';
ALTER TABLE refunds ADD COLUMN paid_at DATETIME NULL;
DROP INDEX uk_refunds_order_trade;
CREATE UNIQUE INDEX uk_refunds_base_no ON refunds (base_no);
CREATE INDEX idx_refunds_order ON refunds (order_id);
DROP INDEX idx_refunds_order;
ALTER TABLE refunds DROP COLUMN note;
`,
	}, {
		name:  "other statements are the same in both dialects",
		mysql: "UPDATE payments SET paid_at = created_at\n  WHERE paid_at IS NULL;\nDROP TABLE webhooks;\n",
		want:  "UPDATE payments SET paid_at = created_at\nWHERE paid_at IS NULL;\nDROP TABLE webhooks;\n",
	}, {
		name: "a StatementBegin block is kept as written",
		mysql: `-- +goose StatementBegin
-- kept
SELECT 1;
-- +goose StatementEnd
`,
		want: "-- +goose StatementBegin\n-- kept\nSELECT 1;\n-- +goose StatementEnd\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := translateToSQLite(tc.mysql)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("translation (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTranslateToSQLiteRefuses: what SQLite cannot do in place is an error
// that points at the overrides, never a silently different schema.
func TestTranslateToSQLiteRefuses(t *testing.T) {
	for _, mysql := range []string{
		"ALTER TABLE idempotency_keys MODIFY idem_key VARCHAR(255) NOT NULL;\n",
		"CREATE TABLE t (\n  n INT NOT NULL AUTO_INCREMENT,\n  PRIMARY KEY (n, m)\n);\n",
		"CREATE TABLE t (\n  id BIGINT NOT NULL\n) ENGINE=InnoDB\n",
	} {
		if got, err := translateToSQLite(mysql); err == nil {
			t.Errorf("%q translated to %q, want an error", mysql, got)
		}
	}
	_, err := translateToSQLite("ALTER TABLE t MODIFY c INT;\n")
	if err == nil || !strings.Contains(err.Error(), "sqlite-overrides") {
		t.Errorf("MODIFY: error %v does not point at sqlite-overrides", err)
	}
}

// TestSQLiteOverrides: an override replaces its MySQL file's translation,
// and one without a MySQL file of its name is an error.
func TestSQLiteOverrides(t *testing.T) {
	mysql := fstest.MapFS{
		"00001_a.sql": {Data: []byte("ALTER TABLE t MODIFY c INT;\n")},
		"00002_b.sql": {Data: []byte("DROP TABLE t;\n")},
	}
	over := fstest.MapFS{"00001_a.sql": {Data: []byte("-- rebuilt\n")}}
	lite, err := sqliteMigrationsOf(mysql, over)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(lite.(fstest.MapFS)["00001_a.sql"].Data); got != "-- rebuilt\n" {
		t.Errorf("00001 = %q, want the override", got)
	}
	over["00003_c.sql"] = &fstest.MapFile{Data: []byte("SELECT 1;\n")}
	if _, err := sqliteMigrationsOf(mysql, over); err == nil {
		t.Error("an override without its MySQL migration was accepted")
	}
}

// TestSQLiteMigrationsUpDownUp: the translated migrations apply on SQLite;
// going down to any version leaves the schema the way up left it there, down
// to 0 leaves nothing, and up again rebuilds the same schema. The rules the
// ledger leans on hold: a unique key refuses a duplicate, and an id is never
// handed out twice (AUTOINCREMENT, not a reused ROWID).
func TestSQLiteMigrationsUpDownUp(t *testing.T) {
	ctx := context.Background()
	db, err := OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), PoolConfig{MaxOpen: 1})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqlDB.Close() })
	p, err := migrationProvider(db)
	if err != nil {
		t.Fatal(err)
	}
	versions := p.ListSources()
	up := map[int64]string{0: ""}
	for _, src := range versions {
		if _, err := p.UpByOne(ctx); err != nil {
			t.Fatalf("up to %d: %v", src.Version, err)
		}
		up[src.Version] = sqliteSchema(t, sqlDB)
	}
	last := versions[len(versions)-1].Version
	for i := len(versions) - 2; i >= -1; i-- {
		v := int64(0)
		if i >= 0 {
			v = versions[i].Version
		}
		if _, err := p.DownTo(ctx, v); err != nil {
			t.Fatalf("down to %d: %v", v, err)
		}
		if diff := cmp.Diff(up[v], sqliteSchema(t, sqlDB)); diff != "" {
			t.Errorf("down to %d differs from up to %d (-up +down):\n%s", v, v, diff)
		}
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
	if diff := cmp.Diff(up[last], sqliteSchema(t, sqlDB)); diff != "" {
		t.Errorf("up again differs (-first +again):\n%s", diff)
	}

	exec := func(q string) error { _, err := sqlDB.Exec(q); return err }
	user := func(token string) error {
		return exec(`INSERT INTO users (name, token_hash, created_at) VALUES ('u', '` + token + `', '2026-01-01 00:00:00.000')`)
	}
	if err := user("t1"); err != nil {
		t.Fatal(err)
	}
	if err := user("t1"); err == nil {
		t.Error("uk_users_token_hash took a second user with the same token")
	}
	pay := func(provider, trade string) error {
		return exec(`INSERT INTO payments (provider, trade_no, order_id, amount_cents, disposition, created_at) VALUES ('` +
			provider + `', '` + trade + `', 1, 100, 'applied', '2026-01-01 00:00:00.000')`)
	}
	if err := pay("alipay", "T1"); err != nil {
		t.Fatal(err)
	}
	if err := pay("alipay", "T1"); err == nil {
		t.Error("uk_payments_provider_trade took the same trade twice")
	}
	if err := pay("wechat", "T1"); err != nil {
		t.Errorf("another provider's trade of the same number: %v", err)
	}
	var first int64
	if err := sqlDB.QueryRow(`SELECT MAX(id) FROM users`).Scan(&first); err != nil {
		t.Fatal(err)
	}
	if err := exec(`DELETE FROM users`); err != nil {
		t.Fatal(err)
	}
	if err := user("t2"); err != nil {
		t.Fatal(err)
	}
	var next int64
	if err := sqlDB.QueryRow(`SELECT id FROM users`).Scan(&next); err != nil {
		t.Fatal(err)
	}
	if next <= first {
		t.Errorf("id after deleting id %d = %d: reused", first, next)
	}
}

// sqliteSchema describes every table of the ledger: its columns (type, NOT
// NULL, default, primary key), whether its id is AUTOINCREMENT, and its
// indexes with their columns and uniqueness.
func sqliteSchema(t *testing.T, db *sql.DB) string {
	t.Helper()
	var out []string
	tables := sqliteRows(t, db, `SELECT name, sql LIKE '%AUTOINCREMENT%' FROM sqlite_master
		WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'goose_db_version' ORDER BY name`)
	for _, tbl := range tables {
		name := tbl[0]
		out = append(out, "table "+name+" autoincrement="+tbl[1])
		for _, c := range sqliteRows(t, db, `SELECT name, type, "notnull", IFNULL(dflt_value, 'NULL'), pk FROM pragma_table_info(?) ORDER BY cid`, name) {
			out = append(out, "  column "+strings.Join(c, " "))
		}
		var indexes []string
		for _, ix := range sqliteRows(t, db, `SELECT name, "unique", origin FROM pragma_index_list(?)`, name) {
			var cols []string
			for _, c := range sqliteRows(t, db, `SELECT name FROM pragma_index_info(?) ORDER BY seqno`, ix[0]) {
				cols = append(cols, c[0])
			}
			indexes = append(indexes, fmt.Sprintf("  index %s unique=%s origin=%s (%s)", ix[0], ix[1], ix[2], strings.Join(cols, ", ")))
		}
		sort.Strings(indexes)
		out = append(out, indexes...)
	}
	return strings.Join(out, "\n")
}

func sqliteRows(t *testing.T, db *sql.DB, q string, args ...any) [][]string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		row := make([]string, len(cols))
		ptrs := make([]any, len(cols))
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
