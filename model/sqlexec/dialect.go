package sqlexec

import (
	"database/sql/driver"
	"fmt"
	"regexp"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Dialect is what differs between the two databases the engine runs on:
// MySQL/MariaDB in production, SQLite for the zero-set-up dev mode. The SQL
// given to a Session is written for MySQL; the few statements that cannot be
// shared ask the dialect, and everything else passes through rewrite.
type Dialect struct {
	SQLite bool
	// MariaDB: the server runs compound statements (IF … SIGNAL … END IF)
	// outside stored programs, so a held statement can carry its own check
	// (held.go, LaterExpect). Elsewhere such statements run at once.
	MariaDB bool
	// Galera: a MariaDB Galera node (wsrep_on), where another node's
	// commit is applied here a moment later (the ledger's causal reads).
	Galera bool
}

// DialectOf asks db which database it is.
func DialectOf(db *gorm.DB) Dialect {
	if db.Dialector.Name() == "sqlite" {
		return Dialect{SQLite: true}
	}
	// Unknown (the server unreachable at start) costs only round trips,
	// and on Galera the causal reads.
	var version string
	_ = db.Raw(`SELECT VERSION()`).Scan(&version).Error
	d := Dialect{MariaDB: strings.Contains(version, "MariaDB")}
	if d.MariaDB {
		var wsrepOn int
		// A server built without wsrep has no such variable: not Galera.
		d.Galera = db.Raw(`SELECT @@global.wsrep_on`).Scan(&wsrepOn).Error == nil && wsrepOn == 1
	}
	return d
}

// Name is "sqlite" or "mysql" (MariaDB included).
func (d Dialect) Name() string {
	if d.SQLite {
		return "sqlite"
	}
	return "mysql"
}

// sqliteDropped are MySQL clauses with no meaning on SQLite: every SQLite
// transaction begins IMMEDIATE and holds the database's one write lock until
// it ends, so transactions are serial and row locks (FOR UPDATE, SKIP
// LOCKED) have nothing to do; sqliteHint is an index hint (FORCE INDEX (…)),
// which SQLite does not know either.
var (
	sqliteDropped = strings.NewReplacer(" FOR UPDATE SKIP LOCKED", "", " FOR UPDATE", "")
	sqliteHint    = regexp.MustCompile(` FORCE INDEX \([^)]*\)`)
)

// block makes a batch of statements whose answer nobody reads — held
// statements, a COMMIT — one compound statement on MariaDB: the server then
// runs them as one and sends one result instead of one per statement, which
// costs both sides far less than a multi-statement batch (on this project's
// machine, six statements: 220 → 165 µs of server CPU, 118 → 47 µs of
// client). An error inside stops it like it stops a batch, with the same
// error, and leaves the transaction open for the rollback (a deadlock has
// already rolled it back; the ROLLBACK is then a no-op). The affected-rows
// count of a block is not any one statement's, hence only for these.
func (d Dialect) block(batch string) string {
	if !d.MariaDB || !strings.Contains(batch, ";") {
		return batch
	}
	return "BEGIN NOT ATOMIC\n" + batch + ";\nEND"
}

// rewrite adapts a statement to the database.
func (d Dialect) rewrite(query string) string {
	if !d.SQLite {
		return query
	}
	query = sqliteDropped.Replace(query)
	if strings.Contains(query, " FORCE INDEX") {
		query = sqliteHint.ReplaceAllString(query, "")
	}
	return query
}

// args adapts arguments: SQLite stores times as text, which compares in time
// order only in one format, so every time is sent in UTC at the millisecond
// precision MySQL's DATETIME(3) keeps.
func (d Dialect) args(args []any) []any {
	if !d.SQLite {
		return args
	}
	for i, a := range args {
		switch v := a.(type) {
		case time.Time:
			args[i] = v.UTC().Truncate(time.Millisecond)
		case *time.Time:
			if v != nil {
				t := v.UTC().Truncate(time.Millisecond)
				args[i] = &t
			}
		}
	}
	return args
}

// Concat joins SQL string expressions.
func (d Dialect) Concat(parts ...string) string {
	if d.SQLite {
		return strings.Join(parts, " || ")
	}
	return "CONCAT(" + strings.Join(parts, ", ") + ")"
}

// NullTime scans a time that may come back as text: SQLite types a column's
// values as times, but not an expression's (MIN(created_at)).
type NullTime struct {
	Time  time.Time
	Valid bool
}

// Scan implements sql.Scanner.
func (t *NullTime) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*t = NullTime{}
	case time.Time:
		*t = NullTime{Time: x, Valid: true}
	case string:
		return t.parse(x)
	case []byte:
		return t.parse(string(x))
	default:
		return fmt.Errorf("scan time: unsupported %T", v)
	}
	return nil
}

// Value implements driver.Valuer (gorm wants both halves).
func (t NullTime) Value() (driver.Value, error) {
	if !t.Valid {
		return nil, nil
	}
	return t.Time, nil
}

func (t *NullTime) parse(s string) error {
	for _, layout := range []string{"2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999", time.RFC3339Nano} {
		if v, err := time.Parse(layout, s); err == nil {
			*t = NullTime{Time: v.UTC(), Valid: true}
			return nil
		}
	}
	return fmt.Errorf("scan time: cannot parse %q", s)
}
