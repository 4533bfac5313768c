package svc

import (
	"context"

	"orderflow/internal/infra/tracing"
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

// NewStore is the ledger's Store on db, stamping the rows that carry a
// trace with the request's, and with a span per transaction when tracing
// is on (Boot sets it up before the connections).
func NewStore(db *gorm.DB) *model.Store {
	s := model.NewStore(db)
	s.SetTraceparent(tracing.Traceparent)
	if tracing.On() {
		s.SetTracer(tracing.Tracer())
	}
	return s
}

// Migrate applies the ledger's pending migrations and returns how many ran:
// `api migrate` calls it, so the API never names the ledger itself.
func (s *ServiceContext) Migrate(ctx context.Context) (int, error) {
	return model.Migrate(ctx, s.DB)
}
