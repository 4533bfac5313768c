package model

import (
	"context"
	"time"
)

// Group is a group-buy.
type Group struct {
	ID            int64
	GroupNo       string
	OwnerUserID   int64
	Title         string
	PriceCents    int64
	Deadline      time.Time
	Status        GroupStatus
	SettleGen     int
	FailureReason string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	ClosedAt      *time.Time
	SettledAt     *time.Time
}

// Participant is one member of a group-buy.
type Participant struct {
	GroupID   int64
	UserID    int64
	JoinedAt  time.Time
	ChargedAt *time.Time
}

// InsertGroup creates an OPEN group and sets its ID.
func (s *Store) InsertGroup(ctx context.Context, g *Group) error {
	id, err := s.insert(ctx,
		"INSERT INTO `groups` (group_no, owner_user_id, title, price_cents, deadline, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		g.GroupNo, g.OwnerUserID, g.Title, g.PriceCents, g.Deadline, g.Status, g.CreatedAt, g.UpdatedAt)
	g.ID = id
	return err
}

// GroupByNo loads a group.
func (s *Store) GroupByNo(ctx context.Context, groupNo string) (*Group, error) {
	return rowOf[Group](ctx, s, "SELECT * FROM `groups` WHERE group_no = ?", groupNo)
}

// Participants lists a group's members.
func (s *Store) Participants(ctx context.Context, groupID int64) ([]Participant, error) {
	return rowsOf[Participant](ctx, s, `SELECT * FROM group_participants WHERE group_id = ? ORDER BY user_id`, groupID)
}

// InsertParticipant adds a member; false means they had joined already.
func (s *Store) InsertParticipant(ctx context.Context, groupID, userID int64, at time.Time) (bool, error) {
	return s.insertIgnoringDuplicate(ctx, `INSERT INTO group_participants (group_id, user_id, joined_at) VALUES (?, ?, ?)`, groupID, userID, at)
}

// LockOpenGroup takes the group row's lock for the joining transaction and
// reports whether the group is still joinable (OPEN, deadline after now).
// The close writes the same row, so a join cannot race it: whichever
// commits second sees the first. (Deciding from an UPDATE's row count would
// not do: the driver reports rows changed, so two joins in the same
// millisecond would see 0.)
func (s *Store) LockOpenGroup(ctx context.Context, groupID int64, now time.Time) (bool, error) {
	var g struct {
		Status   GroupStatus
		Deadline time.Time
	}
	if err := s.first(ctx, &g, "SELECT status, deadline FROM `groups` WHERE id = ? FOR UPDATE", groupID); err != nil {
		return false, err
	}
	return g.Status == GroupOpen && g.Deadline.After(now), nil
}

// GroupMove is one conditional status change of a group.
type GroupMove struct {
	From   []GroupStatus // the statuses it may leave (one UPDATE names them all)
	To     GroupStatus
	Reason string
	At     time.Time
	Set    map[string]any
}

// MoveGroup applies m by primary key with one UPDATE naming the statuses it
// leaves, and records the event; false means someone else moved it first.
func (s *Store) MoveGroup(ctx context.Context, g *Group, m GroupMove) (bool, error) {
	for _, f := range m.From {
		if err := GroupMachine.Check(g.GroupNo, f, m.To); err != nil {
			return false, err
		}
	}
	u := newStatusUpdate("`groups`", m.To, m.At, m.Set)
	u.from(g.ID, "status IN ?", m.From)
	q, args := u.sql()
	n, err := s.exec(ctx, q, args...)
	if err != nil || n == 0 {
		return false, err
	}
	// The event names the status actually left: re-read inside the transaction.
	from := m.From[0]
	if len(m.From) > 1 {
		from = g.Status
	}
	if err := s.webhookForMoveLater(ctx, "group", from.String(), m.To.String(), m.At, map[string]any{"group_no": g.GroupNo}); err != nil {
		return false, err
	}
	return true, s.InsertEventLater(ctx, Event{ObjectType: "group", ObjectNo: g.GroupNo, FromStatus: from.String(), ToStatus: m.To.String(), Reason: m.Reason, CreatedAt: m.At})
}

// ChargeParticipants debits every participant of a group price cents, with
// one wallet entry each (unique ref per group and user), and reports the
// number charged. Users short of balance are not debited; the caller compares
// the count and rolls back.
func (s *Store) ChargeParticipants(ctx context.Context, g *Group, at time.Time) (int64, error) {
	// Only users are updated here, so the row count is the number charged
	// (a multi-table UPDATE counts rows of every table it writes).
	charge := "UPDATE users u JOIN group_participants p ON p.user_id = u.id " +
		"SET u.balance_cents = u.balance_cents - ? " +
		"WHERE p.group_id = ? AND p.charged_at IS NULL AND u.balance_cents >= ?"
	if s.d.sqlite { // no multi-table UPDATE there
		charge = "UPDATE users SET balance_cents = balance_cents - ? " +
			"WHERE id IN (SELECT user_id FROM group_participants WHERE group_id = ? AND charged_at IS NULL) AND balance_cents >= ?"
	}
	n, err := s.exec(ctx, charge, g.PriceCents, g.ID, g.PriceCents)
	if err != nil {
		return 0, err
	}
	if _, err := s.exec(ctx, `UPDATE group_participants SET charged_at = ? WHERE group_id = ? AND charged_at IS NULL`, at, g.ID); err != nil {
		return 0, err
	}
	_, err = s.exec(ctx,
		"INSERT INTO wallet_entries (user_id, kind, ref, amount_cents, created_at) "+
			"SELECT user_id, 'charge', "+s.d.concat("'group:'", "?", "':user:'", "user_id")+", ?, ? FROM group_participants WHERE group_id = ? AND charged_at = ?",
		g.GroupNo, -g.PriceCents, at, g.ID, at)
	return n, err
}

// ShortParticipants lists a group's members whose balance is below price.
func (s *Store) ShortParticipants(ctx context.Context, g *Group) ([]int64, error) {
	var ids []int64
	err := s.all(ctx, &ids,
		"SELECT p.user_id FROM group_participants p JOIN users u ON u.id = p.user_id WHERE p.group_id = ? AND u.balance_cents < ? ORDER BY p.user_id",
		g.ID, g.PriceCents)
	return ids, err
}

// CountParticipants returns how many members a group has.
func (s *Store) CountParticipants(ctx context.Context, groupID int64) (int64, error) {
	var n int64
	err := s.first(ctx, &n, `SELECT COUNT(*) FROM group_participants WHERE group_id = ?`, groupID)
	return n, err
}

// BumpSettleGen gives a group still in one of the statuses a new settle
// task generation.
func (s *Store) BumpSettleGen(ctx context.Context, id int64, nextGen int, statuses ...GroupStatus) (bool, error) {
	n, err := s.exec(ctx, "UPDATE `groups` SET settle_gen = ? WHERE id = ? AND settle_gen = ? AND status IN ?", nextGen, id, nextGen-1, statuses)
	return n == 1, err
}
