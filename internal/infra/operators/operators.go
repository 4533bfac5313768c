// Package operators answers the two questions every admin surface asks
// (the admin API, the console, /monitoring/, /metrics and /debug/pprof):
// which operator is this token, and may that operator's role do this.
// Operators come from ORDERFLOW_ADMIN_TOKENS ("name:role:token,...") and
// ORDERFLOW_ADMIN_TOKEN (an admin named "admin").
package operators

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// Role is what an operator may do; each role may do everything the one
// before it may.
type Role string

const (
	// RoleViewer reads: every GET and HEAD.
	RoleViewer Role = "viewer"
	// RoleOperator reads and acts: retries, refunds, resolutions, queue pauses.
	RoleOperator Role = "operator"
	// RoleAdmin also creates users and products, adds cards, and reads profiles.
	RoleAdmin Role = "admin"
)

// rank orders the roles; an unknown role ranks below every known one.
var rank = map[Role]int{RoleViewer: 1, RoleOperator: 2, RoleAdmin: 3}

// Covers reports whether r may do what needs the role need.
func (r Role) Covers(need Role) bool { return rank[r] > 0 && rank[r] >= rank[need] }

// Reads reports whether a request method only reads: GET, HEAD and
// OPTIONS change nothing; every other method may. The role rule and the
// cross-site check of the operator UIs both ask this.
func Reads(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	return false
}

// NeedFor is the least role a request method needs: a read any role, a
// change an operator. Routes that need Admin say so themselves.
func NeedFor(method string) Role {
	if Reads(method) {
		return RoleViewer
	}
	return RoleOperator
}

// MinTokenLen is the shortest token accepted, in bytes.
const MinTokenLen = 16

// DefaultAdminName is the name ORDERFLOW_ADMIN_TOKEN's operator goes by.
const DefaultAdminName = "admin"

// Operator is one named token and its role.
type Operator struct {
	Name  string
	Role  Role
	Token string
}

// String names the operator and its role, never its token, so a stray
// %v in a log line cannot leak it.
func (o Operator) String() string { return o.Name + " (" + string(o.Role) + ")" }

// Set is the configured operators. The zero Set admits nobody.
type Set struct{ ops []Operator }

// New builds the set from ORDERFLOW_ADMIN_TOKEN (empty: none) and
// ORDERFLOW_ADMIN_TOKENS (empty: none). Its error names the entry by
// position and never quotes a token.
func New(adminToken, list string) (*Set, error) {
	var ops []Operator
	if adminToken != "" {
		ops = append(ops, Operator{Name: DefaultAdminName, Role: RoleAdmin, Token: adminToken})
	}
	if strings.TrimSpace(list) != "" {
		for i, entry := range strings.Split(list, ",") {
			op, err := parseEntry(strings.TrimSpace(entry))
			if err != nil {
				return nil, fmt.Errorf("entry %d: %w", i+1, err)
			}
			ops = append(ops, op)
		}
	}
	for i, a := range ops {
		for _, b := range ops[:i] {
			switch {
			case a.Name == b.Name:
				return nil, fmt.Errorf("operator name %q given twice", a.Name)
			case a.Token == b.Token:
				return nil, fmt.Errorf("operators %q and %q share a token", b.Name, a.Name)
			}
		}
	}
	return &Set{ops: ops}, nil
}

func parseEntry(entry string) (Operator, error) {
	parts := strings.Split(entry, ":")
	if len(parts) != 3 {
		return Operator{}, errors.New("want name:role:token")
	}
	op := Operator{Name: parts[0], Role: Role(parts[1]), Token: parts[2]}
	switch {
	case !validName(op.Name):
		return Operator{}, errors.New("want a name of letters, digits and . _ @ -")
	case rank[op.Role] == 0:
		return Operator{}, fmt.Errorf("operator %q: role %q: want viewer, operator or admin", op.Name, op.Role)
	case len(op.Token) < MinTokenLen:
		return Operator{}, fmt.Errorf("operator %q: token shorter than %d characters", op.Name, MinTokenLen)
	}
	return op, nil
}

// validName keeps names fit for a log field, a page header and a cookie.
func validName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._@-", c)
		if !ok {
			return false
		}
	}
	return true
}

// Len is how many operators are configured.
func (s *Set) Len() int { return len(s.ops) }

// ByToken is the operator a token belongs to. It compares the token with
// every configured one in constant time and without stopping early, so
// neither the time taken nor which operator matched tells anything about
// the tokens. The operator returned carries no token.
func (s *Set) ByToken(token string) (Operator, bool) {
	found, match := Operator{}, 0
	for _, op := range s.ops {
		eq := subtle.ConstantTimeCompare([]byte(token), []byte(op.Token))
		if eq == 1 && match == 0 {
			found = op
		}
		match |= eq
	}
	if token == "" || match == 0 {
		return Operator{}, false
	}
	found.Token = ""
	return found, true
}

// ByName is the operator of a name (without its token), for a console
// session that remembers whom it was started by.
func (s *Set) ByName(name string) (Operator, bool) {
	for _, op := range s.ops {
		if op.Name == name {
			op.Token = ""
			return op, true
		}
	}
	return Operator{}, false
}

// Key derives a secret for purpose from every operator's name, role and
// token: a change to any of them changes the key (and so ends what it
// signed, such as console sessions).
func (s *Set) Key(purpose string) []byte {
	ops := append([]Operator(nil), s.ops...)
	sort.Slice(ops, func(i, j int) bool { return ops[i].Name < ops[j].Name })
	m := hmac.New(sha256.New, []byte(purpose))
	for _, op := range ops {
		m.Write([]byte(op.Name + "\x00" + string(op.Role) + "\x00" + op.Token + "\x00"))
	}
	return m.Sum(nil)
}

type ctxKey struct{}

// WithOperator is ctx carrying the operator a request was admitted as.
func WithOperator(ctx context.Context, op Operator) context.Context {
	op.Token = ""
	return context.WithValue(ctx, ctxKey{}, op)
}

// FromContext is the operator a request was admitted as (false: none,
// such as a buyer's request).
func FromContext(ctx context.Context) (Operator, bool) {
	op, ok := ctx.Value(ctxKey{}).(Operator)
	return op, ok
}
