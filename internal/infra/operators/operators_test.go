package operators_test

import (
	"context"
	"strings"
	"testing"

	"orderflow/internal/infra/operators"
)

const (
	tokA = "aaaaaaaaaaaaaaaa-admin"
	tokV = "vvvvvvvvvvvvvvvv-viewer"
	tokO = "oooooooooooooooo-operator"
)

func TestNewParsesAndRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, admin, list string
		wantLen           int
		wantErr           string // "" for a valid setting
	}{
		{"admin token alone", tokA, "", 1, ""},
		{"list alone", "", "ann:viewer:" + tokV + ", bob:operator:" + tokO, 2, ""},
		{"both", tokA, "ann:viewer:" + tokV, 2, ""},
		{"neither", "", "", 0, ""},
		{"two fields", "", "ann:" + tokV, 0, "entry 1: want name:role:token"},
		{"four fields", "", "ann:viewer:" + tokV + ":x", 0, "entry 1: want name:role:token"},
		{"empty name", "", ":viewer:" + tokV, 0, "entry 1: want a name"},
		{"name with a space", "", "a b:viewer:" + tokV, 0, "entry 1: want a name"},
		{"unknown role", "", "ann:root:" + tokV, 0, `entry 1: operator "ann": role "root"`},
		{"short token", "", "ann:viewer:" + tokV + ",bob:operator:short-token", 0, `entry 2: operator "bob": token shorter than 16`},
		{"empty entry", "", "ann:viewer:" + tokV + ",", 0, "entry 2: want name:role:token"},
		{"duplicate name", "", "ann:viewer:" + tokV + ",ann:operator:" + tokO, 0, `operator name "ann" given twice`},
		{"admin named twice", tokA, "admin:viewer:" + tokV, 0, `operator name "admin" given twice`},
		{"duplicate token", tokA, "ann:viewer:" + tokA, 0, `operators "admin" and "ann" share a token`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := operators.New(tc.admin, tc.list)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if s.Len() != tc.wantLen {
					t.Fatalf("Len = %d, want %d", s.Len(), tc.wantLen)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("New error = %v, want one containing %q", err, tc.wantErr)
			}
			for _, tok := range []string{tokA, tokV, tokO, "short-token"} {
				if strings.Contains(err.Error(), tok) {
					t.Fatalf("error %q quotes a token", err)
				}
			}
		})
	}
}

func TestByTokenAndByName(t *testing.T) {
	s, err := operators.New(tokA, "ann:viewer:"+tokV+",bob:operator:"+tokO)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		token, wantName string
		wantRole        operators.Role
		ok              bool
	}{
		{tokA, "admin", operators.RoleAdmin, true},
		{tokV, "ann", operators.RoleViewer, true},
		{tokO, "bob", operators.RoleOperator, true},
		{"", "", "", false},
		{tokV + "x", "", "", false},
		{tokV[:len(tokV)-1], "", "", false},
	} {
		op, ok := s.ByToken(tc.token)
		if ok != tc.ok || op.Name != tc.wantName || op.Role != tc.wantRole || op.Token != "" {
			t.Errorf("ByToken(%d bytes) = %+v, %v; want %s/%s, %v, no token", len(tc.token), op, ok, tc.wantName, tc.wantRole, tc.ok)
		}
	}
	if op, ok := s.ByName("bob"); !ok || op.Role != operators.RoleOperator || op.Token != "" {
		t.Errorf("ByName(bob) = %+v, %v", op, ok)
	}
	if _, ok := s.ByName("carol"); ok {
		t.Error("ByName(carol) found an operator that is not configured")
	}
	if got := (operators.Operator{Name: "ann", Role: operators.RoleViewer, Token: tokV}).String(); strings.Contains(got, tokV) {
		t.Errorf("String() = %q shows the token", got)
	}
}

// TestRoleRule is the whole rule: reads need any role, other methods an
// operator, and the routes that say so an admin.
func TestRoleRule(t *testing.T) {
	roles := []operators.Role{operators.RoleViewer, operators.RoleOperator, operators.RoleAdmin, "root", ""}
	for _, tc := range []struct {
		method    string
		adminOnly bool
		allowed   map[operators.Role]bool
	}{
		{"GET", false, map[operators.Role]bool{operators.RoleViewer: true, operators.RoleOperator: true, operators.RoleAdmin: true}},
		{"HEAD", false, map[operators.Role]bool{operators.RoleViewer: true, operators.RoleOperator: true, operators.RoleAdmin: true}},
		{"POST", false, map[operators.Role]bool{operators.RoleOperator: true, operators.RoleAdmin: true}},
		{"DELETE", false, map[operators.Role]bool{operators.RoleOperator: true, operators.RoleAdmin: true}},
		{"PUT", false, map[operators.Role]bool{operators.RoleOperator: true, operators.RoleAdmin: true}},
		{"OPTIONS", false, map[operators.Role]bool{operators.RoleViewer: true, operators.RoleOperator: true, operators.RoleAdmin: true}},
		{"POST", true, map[operators.Role]bool{operators.RoleAdmin: true}},
		{"GET", true, map[operators.Role]bool{operators.RoleAdmin: true}},
	} {
		need := operators.NeedFor(tc.method)
		if tc.adminOnly {
			need = operators.RoleAdmin
		}
		for _, r := range roles {
			if got := r.Covers(need); got != tc.allowed[r] {
				t.Errorf("%s (admin only %v) by %q: allowed %v, want %v", tc.method, tc.adminOnly, r, got, tc.allowed[r])
			}
		}
	}
}

func TestKeyFollowsTheTokens(t *testing.T) {
	a, _ := operators.New(tokA, "ann:viewer:"+tokV)
	b, _ := operators.New(tokA, "ann:viewer:"+tokV)
	c, _ := operators.New(tokA, "ann:operator:"+tokV)
	if string(a.Key("x")) != string(b.Key("x")) {
		t.Error("the same operators derive different keys")
	}
	if string(a.Key("x")) == string(c.Key("x")) || string(a.Key("x")) == string(a.Key("y")) {
		t.Error("a changed role or purpose derives the same key")
	}
}

func TestContextCarriesNoToken(t *testing.T) {
	ctx := operators.WithOperator(context.Background(), operators.Operator{Name: "ann", Role: operators.RoleViewer, Token: tokV})
	op, ok := operators.FromContext(ctx)
	if !ok || op.Name != "ann" || op.Token != "" {
		t.Fatalf("FromContext = %+v, %v", op, ok)
	}
	if _, ok := operators.FromContext(context.Background()); ok {
		t.Fatal("FromContext found an operator in a bare context")
	}
}
