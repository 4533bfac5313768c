package svc

import (
	"orderflow/model"

	"gorm.io/gorm"
)

// NewDB opens the ledger: MySQL/MariaDB, or the dev mode's SQLite file.
func NewDB(c Config) (*gorm.DB, error) {
	if c.SQLitePath != "" {
		return model.OpenSQLite(c.SQLitePath, model.PoolConfig{MaxOpen: c.DBMaxOpen})
	}
	return model.Open(c.MySQLDSN, model.PoolConfig{MaxOpen: c.DBMaxOpen, MaxIdle: c.DBMaxOpen})
}
