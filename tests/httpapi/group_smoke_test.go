package httpapi

import (
	"testing"
	"time"

	"orderflow/internal/testenv"
)

// A group-buy settles at its deadline and charges every participant once.
func TestSmokeGroupSettles(t *testing.T) {
	s := testenv.Start(t, testenv.Options{})
	owner, ownerC := s.NewUser(t, "owner", 0)
	var g struct {
		GroupNo string `json:"group_no"`
	}
	deadline := time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	if st := ownerC.Do(t, "POST", "/api/v1/groups", map[string]any{"title": "tea", "price_cents": 700, "deadline": deadline}, &g); st != 201 {
		t.Fatalf("create group: %d", st)
	}
	var ids []int64
	for i := range 3 {
		u, c := s.NewUser(t, "p", 1000)
		ids = append(ids, u.ID)
		if st := c.Do(t, "POST", "/api/v1/groups/"+g.GroupNo+"/join", nil, nil); st != 200 {
			t.Fatalf("join %d: %d", i, st)
		}
	}
	var view struct {
		Status       string `json:"status"`
		Participants []struct {
			UserID  int64 `json:"user_id"`
			Charged bool  `json:"charged"`
		} `json:"participants"`
	}
	testenv.Eventually(t, 10*time.Second, "group settled", func() (bool, error) {
		ownerC.Do(t, "GET", "/api/v1/groups/"+g.GroupNo, nil, &view)
		return view.Status == "settled", nil
	})
	for _, p := range view.Participants {
		if !p.Charged {
			t.Errorf("participant %d not charged", p.UserID)
		}
	}
	for _, id := range ids {
		var u struct {
			BalanceCents int64 `json:"balance_cents"`
		}
		s.Admin.Do(t, "GET", "/api/v1/admin/users/"+itoa(id), nil, &u)
		if u.BalanceCents != 300 {
			t.Errorf("user %d balance = %d, want 300", id, u.BalanceCents)
		}
	}
	_ = owner
	if st := ownerC.Do(t, "POST", "/api/v1/groups/"+g.GroupNo+"/join", nil, nil); st != 409 {
		t.Errorf("join after settle: %d, want 409", st)
	}
}
