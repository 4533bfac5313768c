package model

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"gorm.io/gorm"
)

// Each database has its own migrations, numbered alike: a change to the
// schema is one new file in each directory.
//
//go:embed migrations/mysql/*.sql migrations/sqlite/*.sql
var migrations embed.FS

func migrationProvider(db *gorm.DB) (*goose.Provider, error) {
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	dir, dialect := "migrations/mysql", goose.DialectMySQL
	if dialectOf(db).sqlite {
		dir, dialect = "migrations/sqlite", goose.DialectSQLite3
	}
	sub, err := fs.Sub(migrations, dir)
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(dialect, sqlDB, sub)
}

// Migrate applies every pending schema migration and returns how many ran.
func Migrate(ctx context.Context, db *gorm.DB) (int, error) {
	p, err := migrationProvider(db)
	if err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return len(res), fmt.Errorf("migrate: %w", err)
	}
	return len(res), nil
}

// MigrationsCurrent reports whether the database has every migration this binary knows.
func MigrationsCurrent(ctx context.Context, db *gorm.DB) (bool, error) {
	p, err := migrationProvider(db)
	if err != nil {
		return false, err
	}
	pending, err := p.HasPending(ctx)
	return !pending, err
}
