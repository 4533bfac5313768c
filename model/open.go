package model

import (
	"orderflow/model/sqlexec"

	"gorm.io/gorm"
)

// PoolConfig sizes the connection pool.
type PoolConfig = sqlexec.PoolConfig

// Open connects to MySQL/MariaDB with the ledger's session settings (UTC,
// utf8mb4, READ COMMITTED; a DSN listing several nodes fails over between
// them): see sqlexec.Open.
func Open(dsn string, pool PoolConfig) (*gorm.DB, error) { return sqlexec.Open(dsn, pool) }

// OpenSQLite opens (creating it if missing) the embedded ledger of the dev
// mode: see sqlexec.OpenSQLite.
func OpenSQLite(path string, pool PoolConfig) (*gorm.DB, error) {
	return sqlexec.OpenSQLite(path, pool)
}

// EnsureDatabase creates the DSN's database if it does not exist yet, so a
// fresh server needs no manual step before `api migrate`.
func EnsureDatabase(dsn string) error { return sqlexec.EnsureDatabase(dsn) }
