package group_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"orderflow/internal/domain/bounds"
	"orderflow/internal/domain/group"
	"orderflow/internal/testenv"
	"orderflow/model"

	"github.com/google/go-cmp/cmp"
)

// A group takes members while it is OPEN and before its deadline, each
// user once; at the deadline, or once it is no longer OPEN, it refuses.
func TestJoin(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ann, bob, cid := f.user(t, "ann", 0), f.user(t, "bob", 0), f.user(t, "cid", 0)
	g := f.group(t, 100)
	closed := f.group(t, 100)
	if err := f.DB.Exec("UPDATE `groups` SET status = ? WHERE id = ?", model.GroupClosed, closed.ID).Error; err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		groupNo string
		user    int64
		at      time.Duration // after the group's creation
		want    error
	}{
		{"a user joins", g.GroupNo, ann, 0, nil},
		{"the same user again", g.GroupNo, ann, time.Minute, group.ErrAlreadyJoined},
		{"another user, a millisecond before the deadline", g.GroupNo, bob, time.Hour - time.Millisecond, nil},
		{"at the deadline", g.GroupNo, cid, time.Hour, group.ErrClosed},
		{"a group no longer OPEN, before its deadline", closed.GroupNo, cid, 0, group.ErrClosed},
		{"no such group", "Gnone", cid, 0, group.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.Clock.Set(g.CreatedAt.Add(tc.at))
			if err := f.svc.Join(f.ctx, tc.groupNo, tc.user); !errors.Is(err, tc.want) {
				t.Errorf("Join = %v, want %v", err, tc.want)
			}
		})
	}
	v, err := f.svc.Get(f.ctx, g.GroupNo)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]group.ParticipantView{{UserID: ann}, {UserID: bob}}, v.Participants); diff != "" {
		t.Errorf("participants (-want +got):\n%s", diff)
	}
	if n := testenv.Count(t, f.DB, "SELECT COUNT(*) FROM group_participants WHERE group_id = ?", closed.ID); n != 0 {
		t.Errorf("the closed group has %d participants, want 0", n)
	}
}

// A group is created with a title, a deadline in the future within a
// year, and a price a wallet may be charged; anything else is refused and
// writes nothing.
func TestCreateRefuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	now := f.Clock.Now()
	for _, tc := range []struct {
		name     string
		title    string
		price    int64
		deadline time.Time
		code     string
	}{
		{"blank title", "   ", 100, now.Add(time.Hour), "invalid_title"},
		{"title of 256", strings.Repeat("t", 256), 100, now.Add(time.Hour), "invalid_title"},
		{"deadline now", "t", 100, now, "invalid_deadline"},
		{"deadline past", "t", 100, now.Add(-time.Second), "invalid_deadline"},
		{"deadline past a year", "t", 100, now.Add(bounds.MaxGroupLife + time.Millisecond), "invalid_deadline"},
		{"free", "t", 0, now.Add(time.Hour), "invalid_price"},
		{"negative price", "t", -1, now.Add(time.Hour), "invalid_price"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.svc.Create(f.ctx, 1, tc.title, tc.price, tc.deadline)
			if testenv.ErrCode(err) != tc.code {
				t.Errorf("Create = %v (code %q), want %s", err, testenv.ErrCode(err), tc.code)
			}
		})
	}
	if n := testenv.Count(t, f.DB, "SELECT COUNT(*) FROM `groups`"); n != 0 {
		t.Errorf("%d groups written, want none", n)
	}
}
