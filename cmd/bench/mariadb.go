package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// dbDSN is the go-sql-driver DSN of one database on the bench's server, as
// the product's processes get it (they add their own session settings).
func dbDSN(server, name string) (string, error) {
	cfg, err := mysql.ParseDSN(server)
	if err != nil {
		return "", fmt.Errorf("-mysql: %w", err)
	}
	cfg.DBName = name
	return cfg.FormatDSN(), nil
}

// openLedger opens a plain database/sql pool with the ledger's session
// settings — UTC, READ COMMITTED — and client-side parameter interpolation,
// so every statement is exactly one round trip (no prepare/close pairs).
func openLedger(ctx context.Context, server, name string, maxOpen int) (*sql.DB, error) {
	cfg, err := mysql.ParseDSN(server)
	if err != nil {
		return nil, fmt.Errorf("-mysql: %w", err)
	}
	cfg.DBName = name
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.InterpolateParams = true
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["time_zone"] = "'+00:00'"
	// MariaDB < 11.1 knows only tx_isolation, MySQL 8 only transaction_isolation.
	for _, v := range []string{"transaction_isolation", "tx_isolation"} {
		delete(cfg.Params, "transaction_isolation")
		delete(cfg.Params, "tx_isolation")
		cfg.Params[v] = "'READ-COMMITTED'"
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(maxOpen)
		db.SetMaxIdleConns(maxOpen)
		err = db.PingContext(ctx)
		if err == nil {
			return db, nil
		}
		db.Close()
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1193 {
			return nil, fmt.Errorf("connect to %s: %w", name, err)
		}
	}
	return nil, fmt.Errorf("connect to %s: neither transaction_isolation nor tx_isolation is known", name)
}

// recreateDatabase drops and creates one of the bench's own databases.
func recreateDatabase(ctx context.Context, server, name string) error {
	db, err := openLedger(ctx, server, "", 1)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range []string{
		"DROP DATABASE IF EXISTS `" + name + "`",
		"CREATE DATABASE `" + name + "` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

func serverVersion(ctx context.Context, db *sql.DB) string {
	var v string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return "unknown"
	}
	return v
}

// isRetryable is a deadlock or lock wait timeout: InnoDB rolled the whole
// transaction back, so running it again is safe.
func isRetryable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205)
}

// queryInt runs a one-number query.
func queryInt(ctx context.Context, db *sql.DB, q string, args ...any) (int64, error) {
	var n sql.NullInt64
	err := db.QueryRowContext(ctx, q, args...).Scan(&n)
	return n.Int64, err
}

// ms returns a time as the ledger stores it: UTC, millisecond precision.
func ms(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// rowLocks is InnoDB's server-wide row lock wait counters (they include any
// other client of the shared server).
type rowLocks struct{ waits, ms int64 }

func readRowLocks(ctx context.Context, db *sql.DB) rowLocks {
	v, _ := globalStatus(ctx, db, "Innodb_row_lock_waits", "Innodb_row_lock_time")
	return rowLocks{waits: v["Innodb_row_lock_waits"], ms: v["Innodb_row_lock_time"]}
}

// globalStatus reads the server's status counters named (SHOW GLOBAL
// STATUS), by name; a counter the server does not have is missing. The
// names are the bench's own constants, written into the statement.
func globalStatus(ctx context.Context, db *sql.DB, names ...string) (map[string]int64, error) {
	rows, err := db.QueryContext(ctx, `SHOW GLOBAL STATUS WHERE Variable_name IN ('`+strings.Join(names, "', '")+`')`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	v := make(map[string]int64, len(names))
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return v, err
		}
		v[name] = n
	}
	return v, rows.Err()
}

// LockWaits is the row lock waiting a phase caused, per order.
type LockWaits struct {
	WaitsPerOrder float64 `json:"row_lock_waits_per_order"`
	MsPerOrder    float64 `json:"row_lock_wait_ms_per_order"`
}

func lockWaits(a, b rowLocks, orders int) LockWaits {
	if orders == 0 {
		return LockWaits{}
	}
	return LockWaits{WaitsPerOrder: round2(float64(b.waits-a.waits) / float64(orders)), MsPerOrder: round2(float64(b.ms-a.ms) / float64(orders))}
}

// prepareDatabase drops and recreates one of the bench's databases and
// applies the product's migrations with the product's own `api migrate`.
func prepareDatabase(ctx context.Context, e *benchEnv, name string) error {
	if err := recreateDatabase(ctx, e.params.MySQL, name); err != nil {
		return err
	}
	dsn, err := dbDSN(e.params.MySQL, name)
	if err != nil {
		return err
	}
	return runOnce(ctx, e.bins.api, []string{"migrate"}, []string{
		"ORDERFLOW_CONFIG=/nonexistent", "ORDERFLOW_MYSQL_DSN=" + dsn, "ORDERFLOW_REDIS_ADDR=" + e.params.RedisAddr,
		fmt.Sprintf("ORDERFLOW_REDIS_DB=%d", e.redisDB), "ORDERFLOW_ADMIN_TOKEN=" + e.adminToken, "ORDERFLOW_PAY_SECRET=" + e.paySecret,
	})
}
