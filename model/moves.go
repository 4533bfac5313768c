package model

import (
	"sort"
	"strings"
	"time"
)

// statusUpdate builds the one statement shape every status move uses:
//
//	UPDATE <table> SET status = ?, updated_at = ?, <columns…>
//	WHERE id = ? AND status <from> <AND extra conditions…>
//
// by primary key, naming the status it leaves, so it can never take a range
// lock on a status index and 0 rows means "someone else moved it".
type statusUpdate struct {
	set   strings.Builder
	where strings.Builder
	args  []any
	wargs []any
}

func newStatusUpdate(table string, to any, at time.Time, cols map[string]any) *statusUpdate {
	u := &statusUpdate{}
	// FORCE INDEX: with few rows in the leaving status the optimizer may pick
	// the status index (and its range locks) over the primary key.
	u.set.WriteString("UPDATE " + table + " FORCE INDEX (PRIMARY) SET status = ?, updated_at = ?")
	u.args = append(u.args, to, at)
	keys := make([]string, 0, len(cols))
	for c := range cols {
		keys = append(keys, c)
	}
	// A fixed column order: the same move is always the same statement.
	sort.Strings(keys)
	for _, c := range keys {
		u.assign(c+" = ?", cols[c])
	}
	return u
}

// assign adds "expr" (with its arguments) to the SET list.
func (u *statusUpdate) assign(expr string, args ...any) {
	u.set.WriteString(", " + expr)
	u.args = append(u.args, args...)
}

// from sets the key and the status condition ("status = ?" or "status IN ?").
func (u *statusUpdate) from(id int64, cond string, arg any) {
	u.where.WriteString(" WHERE id = ? AND " + cond)
	u.wargs = append(u.wargs, id, arg)
}

// and adds a condition.
func (u *statusUpdate) and(cond string, arg any) {
	u.where.WriteString(" AND " + cond)
	u.wargs = append(u.wargs, arg)
}

func (u *statusUpdate) sql() (string, []any) {
	return u.set.String() + u.where.String(), append(u.args, u.wargs...)
}
