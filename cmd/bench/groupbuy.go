package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"orderflow/internal/domain/account"
	"orderflow/internal/jsonhttp"
)

// GroupResult is one group-buy's settlement at its deadline.
type GroupResult struct {
	Participants  int     `json:"participants"`
	JoinSeconds   float64 `json:"join_s"`      // all joins through the API
	SettleS       float64 `json:"settle_s"`    // settled_at − deadline (ledger)
	CommittedS    float64 `json:"committed_s"` // SETTLED first seen by the bench − deadline (5 ms polls)
	CloseS        float64 `json:"close_s"`     // closed_at − deadline: scheduler pickup
	CloseToSettle float64 `json:"close_to_settle_s"`
	Charged       int64   `json:"charged"`
	// SpuriousClosed counts joins answered 409 group_closed while the group
	// was OPEN and before its deadline, retried by the bench (see the note
	// on TouchOpenGroup in the report).
	SpuriousClosed int64  `json:"spurious_group_closed_409"`
	Status         string `json:"status"`
}

// groupBalance and groupPrice: everyone can pay, so settlement succeeds.
const groupBalance, groupPrice = 100_000, 1_500

// insertGroupUsers adds n buyers straight into the ledger (users + their
// opening wallet entry, as the admin API writes them) and returns their
// tokens: creating 1,000 users is not what this phase measures.
func insertGroupUsers(ctx context.Context, db *sql.DB, n int) ([]string, error) {
	now := ms(time.Now())
	prefix := "grp-" + randHex(4) + "-"
	tokens := make([]string, n)
	err := insertMany(ctx, db, `INSERT INTO users (name, token_hash, balance_cents, created_at) VALUES `, "(?, ?, ?, ?)",
		n, 500, func(i int) []any {
			tokens[i] = "u_" + randHex(16)
			return []any{fmt.Sprintf("%s%d", prefix, i), account.HashToken(tokens[i]), groupBalance, now}
		})
	if err != nil {
		return nil, fmt.Errorf("insert group users: %w", err)
	}
	_, err = db.ExecContext(ctx, `INSERT INTO wallet_entries (user_id, kind, ref, amount_cents, created_at)
		SELECT id, 'initial', CONCAT('user:', id, ':initial'), balance_cents, created_at FROM users WHERE name LIKE ?`, prefix+"%")
	if err != nil {
		return nil, fmt.Errorf("insert opening wallet entries: %w", err)
	}
	return tokens, nil
}

func runGroupSettle(ctx context.Context, e *benchEnv, c *apiClient) (*GroupResult, error) {
	p := e.params
	tokens, err := insertGroupUsers(ctx, e.db, p.GroupSize)
	if err != nil {
		return nil, err
	}
	// A whole second, so the settle task (scheduled in whole seconds) is due
	// exactly at the deadline and the number measures the product, not rounding.
	deadline := time.Now().Add(p.GroupLead.D()).Truncate(time.Second)
	groupNo, err := c.createGroup(ctx, e.fx.tokens[0], "bench group", groupPrice, deadline)
	if err != nil {
		return nil, fmt.Errorf("create group: %w", err)
	}
	t0 := time.Now()
	var spurious atomic.Int64
	if err := parallel(ctx, len(tokens), 16, func(ctx context.Context, i int) error {
		for attempt := 1; ; attempt++ {
			err := c.joinGroup(ctx, tokens[i], groupNo)
			var ae *jsonhttp.StatusError
			if errors.As(err, &ae) && ae.Status == 409 && strings.Contains(ae.Body, "group_closed") &&
				attempt < 100 && time.Until(deadline) > 500*time.Millisecond {
				// The group is OPEN and its deadline ahead: this 409 is
				// TouchOpenGroup's 0 "changed" rows when a concurrent join
				// wrote the same updated_at millisecond. Try again.
				spurious.Add(1)
				time.Sleep(time.Millisecond)
				continue
			}
			if err != nil {
				return fmt.Errorf("join %d: %w", i, err)
			}
			return nil
		}
	}); err != nil {
		return nil, fmt.Errorf("joins (deadline %s away at the start): %w", p.GroupLead.D(), err)
	}
	res := &GroupResult{Participants: len(tokens), JoinSeconds: round2(time.Since(t0).Seconds()), SpuriousClosed: spurious.Load()}
	if time.Now().After(deadline) {
		return res, fmt.Errorf("joins took %.1fs, past the deadline; raise -group-lead", res.JoinSeconds)
	}
	var seen time.Time
	for {
		var status string
		if err := e.db.QueryRowContext(ctx, "SELECT status FROM `groups` WHERE group_no = ?", groupNo).Scan(&status); err != nil {
			return nil, err
		}
		if status == "SETTLED" || status == "FAILED" {
			seen, res.Status = time.Now(), status
			break
		}
		if time.Since(deadline) > 30*time.Second {
			return res, fmt.Errorf("group still %s 30 s after its deadline", status)
		}
		time.Sleep(5 * time.Millisecond)
	}
	var closed, settled sql.NullTime
	var gid int64
	if err := e.db.QueryRowContext(ctx, "SELECT id, closed_at, settled_at FROM `groups` WHERE group_no = ?", groupNo).Scan(&gid, &closed, &settled); err != nil {
		return nil, err
	}
	if res.Charged, err = queryInt(ctx, e.db, `SELECT COUNT(*) FROM group_participants WHERE group_id = ? AND charged_at IS NOT NULL`, gid); err != nil {
		return nil, err
	}
	res.CommittedS = round3(seen.Sub(deadline).Seconds())
	if closed.Valid {
		res.CloseS = round3(closed.Time.Sub(deadline).Seconds())
	}
	if settled.Valid {
		res.SettleS = round3(settled.Time.Sub(deadline).Seconds())
		if closed.Valid {
			res.CloseToSettle = round3(settled.Time.Sub(closed.Time).Seconds())
		}
	}
	if res.Status != "SETTLED" {
		return res, fmt.Errorf("group ended %s", res.Status)
	}
	return res, nil
}
