package svc

import (
	"orderflow/model"

	"gorm.io/gorm"
)

// NewDB opens the ledger.
func NewDB(c Config) (*gorm.DB, error) {
	return model.Open(c.MySQLDSN, model.PoolConfig{MaxOpen: c.DBMaxOpen, MaxIdle: c.DBMaxOpen})
}
