package sqlexec

import (
	"testing"
	"time"
)

func TestSQLiteRewriteDropsLockClausesAndHints(t *testing.T) {
	d := Dialect{SQLite: true}
	for in, want := range map[string]string{
		"SELECT id FROM card_keys WHERE product_id = ? LIMIT ? FOR UPDATE SKIP LOCKED": "SELECT id FROM card_keys WHERE product_id = ? LIMIT ?",
		"SELECT status FROM `groups` WHERE id = ? FOR UPDATE":                          "SELECT status FROM `groups` WHERE id = ?",
		"UPDATE orders FORCE INDEX (PRIMARY) SET status = ? WHERE id = ?":              "UPDATE orders SET status = ? WHERE id = ?",
		"SELECT * FROM orders FORCE INDEX (idx_orders_status_expire) WHERE status = ?": "SELECT * FROM orders WHERE status = ?",
	} {
		if got := d.rewrite(in); got != want {
			t.Errorf("rewrite(%q) = %q, want %q", in, got, want)
		}
		if got := (Dialect{}).rewrite(in); got != in {
			t.Errorf("mysql rewrite changed %q to %q", in, got)
		}
	}
	if got := d.Concat("'a:'", "?", "user_id"); got != "'a:' || ? || user_id" {
		t.Errorf("sqlite concat = %q", got)
	}
	if got := (Dialect{}).Concat("'a:'", "?"); got != "CONCAT('a:', ?)" {
		t.Errorf("mysql concat = %q", got)
	}
}

// Times reach SQLite as UTC text at millisecond precision, so their text
// sorts in time order whatever zone or precision the caller used.
func TestSQLiteArgsNormalizeTimes(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 0, 0, 123456789, time.FixedZone("CST", 8*3600))
	args := Dialect{SQLite: true}.args([]any{at, &at, (*time.Time)(nil), 5})
	want := time.Date(2026, 11, 30, 2, 0, 0, 123000000, time.UTC)
	if got := args[0].(time.Time); !got.Equal(want) || got.Location() != time.UTC || got.Nanosecond() != 123000000 {
		t.Errorf("time arg = %v, want %v", got, want)
	}
	if got := *args[1].(*time.Time); !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("*time arg = %v, want %v", got, want)
	}
	if args[2].(*time.Time) != nil || args[3] != 5 {
		t.Errorf("other args changed: %v", args[2:])
	}
}

func TestNullTimeScansTextAndTimes(t *testing.T) {
	want := time.Date(2026, 11, 30, 2, 0, 0, 123000000, time.UTC)
	for _, v := range []any{want, "2026-11-30 02:00:00.123+00:00", []byte("2026-11-30 02:00:00.123"), "2026-11-30T02:00:00.123Z"} {
		var n NullTime
		if err := n.Scan(v); err != nil || !n.Valid || !n.Time.Equal(want) {
			t.Errorf("Scan(%v) = %+v, %v; want %v", v, n, err, want)
		}
	}
	var n NullTime
	if err := n.Scan(nil); err != nil || n.Valid {
		t.Errorf("Scan(nil) = %+v, %v", n, err)
	}
	if err := n.Scan("yesterday"); err == nil {
		t.Error("Scan(\"yesterday\") did not fail")
	}
}
