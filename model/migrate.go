package model

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"gorm.io/gorm"
)

// The schema's one source is migrations/mysql: a change to it is one new
// file there. SQLite runs the same files translated (migrate_sqlite.go).
//
//go:embed migrations/mysql/*.sql migrations/sqlite-overrides/*.sql
var migrations embed.FS

func migrationProvider(db *gorm.DB) (*goose.Provider, error) {
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	if dialectOf(db).sqlite {
		lite, err := sqliteMigrations()
		if err != nil {
			return nil, err
		}
		return goose.NewProvider(goose.DialectSQLite3, sqlDB, lite)
	}
	mysql, err := fs.Sub(migrations, "migrations/mysql")
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(goose.DialectMySQL, sqlDB, mysql)
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
