package testenv

import (
	"testing"

	"gorm.io/gorm"
)

// Count runs a SELECT COUNT(*)-style query on db (a Ledger, or any other
// open database) and returns the number; an error fails the test.
func Count(t testing.TB, db *gorm.DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.Raw(query, args...).Scan(&n).Error; err != nil {
		t.Fatalf("ledger query %q: %v", query, err)
	}
	return n
}

// Exec runs a statement on db, as a fixture writes its rows; an error
// fails the test.
func Exec(t testing.TB, db *gorm.DB, query string, args ...any) {
	t.Helper()
	if err := db.Exec(query, args...).Error; err != nil {
		t.Fatalf("ledger statement %q: %v", query, err)
	}
}
