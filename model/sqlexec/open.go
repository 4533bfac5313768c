package sqlexec

import (
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	gormmysql "gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// PoolConfig sizes the connection pool.
type PoolConfig struct {
	MaxOpen int
	MaxIdle int
}

// UTCConfig parses a MySQL/MariaDB DSN with the settings every reader of
// the ledger needs: times parsed, in UTC, on a session in UTC.
func UTCConfig(dsn string) (*mysql.Config, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse mysql dsn: %w", err)
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["time_zone"] = "'+00:00'"
	return cfg, nil
}

// Open connects to MySQL/MariaDB with the engine's session settings: UTC,
// parsed times, utf8mb4 and READ COMMITTED, so a read after a 0-row UPDATE
// sees the committed truth.
func Open(dsn string, pool PoolConfig) (*gorm.DB, error) {
	dsn, nodes := splitNodes(dsn)
	cfg, err := UTCConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.Params["charset"] = "utf8mb4"
	// Interpolate arguments client-side: one round trip per statement. gorm's
	// prepared-statement cache would prepare and close every statement run
	// inside a transaction — three round trips for one (the bench counted them).
	cfg.InterpolateParams = true
	// Several statements in one round trip (a status move and its event; the
	// held statements of a transaction, held.go). Every argument is
	// still escaped by the driver's interpolation.
	cfg.MultiStatements = true
	// MariaDB < 11.1 knows only tx_isolation, MySQL 8 only transaction_isolation.
	var db *gorm.DB
	for _, v := range []string{"transaction_isolation", "tx_isolation"} {
		delete(cfg.Params, "transaction_isolation")
		delete(cfg.Params, "tx_isolation")
		cfg.Params[v] = "'READ-COMMITTED'"
		var dialector gormmysql.Config
		if dialector, err = dialectorFor(cfg, nodes); err != nil {
			return nil, err
		}
		db, err = gorm.Open(gormmysql.New(dialector), &gorm.Config{
			Logger:                 logger.Discard,
			SkipDefaultTransaction: true,
		})
		if err == nil || mysqlErrno(err) != 1193 {
			break
		}
		if dialector.Conn != nil {
			_ = dialector.Conn.(*sql.DB).Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open mysql: %w", err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	if pool.MaxOpen > 0 {
		sqlDB.SetMaxOpenConns(pool.MaxOpen)
	}
	if pool.MaxIdle > 0 {
		sqlDB.SetMaxIdleConns(pool.MaxIdle)
	}
	sqlDB.SetConnMaxLifetime(30 * time.Minute)
	if len(nodes) > 1 {
		sqlDB.SetConnMaxLifetime(nodeConnMaxLifetime)
	}
	return db, nil
}

// EnsureDatabase creates the DSN's database if it does not exist yet, so a
// fresh server needs no manual step before `api migrate`.
func EnsureDatabase(dsn string) error {
	dsn, nodes := splitNodes(dsn)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return fmt.Errorf("parse mysql dsn: %w", err)
	}
	name := cfg.DBName
	if name == "" {
		return fmt.Errorf("mysql dsn names no database")
	}
	cfg.DBName = ""
	dialector, err := dialectorFor(cfg, nodes)
	if err != nil {
		return err
	}
	db, err := gorm.Open(gormmysql.New(dialector), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return fmt.Errorf("connect to mysql server: %w", err)
	}
	if sqlDB, err := db.DB(); err == nil {
		defer sqlDB.Close()
	}
	return db.Exec("CREATE DATABASE IF NOT EXISTS `" + strings.ReplaceAll(name, "`", "") + "` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin").Error
}

// dialectorFor is gorm's MySQL configuration for cfg: the driver's own
// connections for one address, the node connector (nodes.go) for a list.
func dialectorFor(cfg *mysql.Config, nodes []string) (gormmysql.Config, error) {
	d := gormmysql.Config{DSNConfig: cfg}
	if len(nodes) > 1 {
		nc, err := newNodeConnector(cfg, nodes)
		if err != nil {
			return d, err
		}
		d.Conn = sql.OpenDB(nc)
	}
	return d, nil
}
