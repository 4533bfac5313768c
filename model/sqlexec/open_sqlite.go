package sqlexec

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/glebarez/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// OpenSQLite opens (creating it if missing) the embedded ledger of the dev
// mode: a SQLite file through a pure-Go driver. WAL lets readers run beside
// the one writer; every transaction begins IMMEDIATE, taking the write lock
// up front, so transactions are serial and none can fail half-way on a lock
// upgrade; busy_timeout makes a second writer wait its turn.
func OpenSQLite(path string, pool PoolConfig) (*gorm.DB, error) {
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
	}
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(OFF)")
	q.Set("_txlock", "immediate")
	db, err := gorm.Open(sqlite.Open("file:"+path+"?"+q.Encode()), &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true,
	})
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	if pool.MaxOpen > 0 {
		sqlDB.SetMaxOpenConns(pool.MaxOpen)
		sqlDB.SetMaxIdleConns(pool.MaxOpen)
	}
	sqlDB.SetConnMaxLifetime(30 * time.Minute)
	return db, nil
}
