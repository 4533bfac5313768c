package testenv

import (
	"testing"

	"github.com/go-sql-driver/mysql"
	gormmysql "gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// CopyDatabase copies a test database (schema and rows, every table) into a
// fresh one on the same server, dropped when the test ends, and returns its
// DSN — so a test can corrupt a copy of a ledger and keep the original.
func CopyDatabase(t testing.TB, srcDSN string) string {
	t.Helper()
	cfg, err := mysql.ParseDSN(srcDSN)
	if err != nil {
		t.Fatalf("testenv: parse dsn: %v", err)
	}
	src := cfg.DBName
	dst := "oftest_" + randHex(6)
	cfg.DBName = ""
	admin, err := gorm.Open(gormmysql.New(gormmysql.Config{DSNConfig: cfg}), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatalf("testenv: connect: %v", err)
	}
	closeAdmin := func() {
		if sqlDB, err := admin.DB(); err == nil {
			sqlDB.Close()
		}
	}
	if err := admin.Exec("CREATE DATABASE " + dst + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin").Error; err != nil {
		closeAdmin()
		t.Fatalf("testenv: create database: %v", err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP DATABASE IF EXISTS " + dst)
		closeAdmin()
	})
	var tables []string
	if err := admin.Raw(`SELECT table_name FROM information_schema.tables WHERE table_schema = ? AND table_type = 'BASE TABLE'`, src).
		Scan(&tables).Error; err != nil {
		t.Fatalf("testenv: list tables of %s: %v", src, err)
	}
	for _, tbl := range tables {
		for _, q := range []string{
			"CREATE TABLE `" + dst + "`.`" + tbl + "` LIKE `" + src + "`.`" + tbl + "`",
			"INSERT INTO `" + dst + "`.`" + tbl + "` SELECT * FROM `" + src + "`.`" + tbl + "`",
		} {
			if err := admin.Exec(q).Error; err != nil {
				t.Fatalf("testenv: copy %s: %v", tbl, err)
			}
		}
	}
	cfg.DBName = dst
	return cfg.FormatDSN()
}
