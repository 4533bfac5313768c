package model

import "context"

// CheckedInGo returns a copy of s that checks laterExpect's expectations in
// Go, as on a server without compound statements (MySQL), so tests can run
// that path on MariaDB too.
func CheckedInGo(s *Store) *Store {
	c := *s
	c.x = s.x.AsMySQL()
	c.d = viewOf(c.x.Dialect())
	return &c
}

// ServerChecks reports whether s sends laterExpect's checks to the server.
func ServerChecks(s *Store) bool { return s.d.mariadb }

// Later holds a statement in s's transaction, as the ledger's own
// fire-and-forget statements are held.
func Later(ctx context.Context, s *Store, query string) error { return s.later(ctx, query) }

// Galera reports whether s takes its server for a Galera node.
func Galera(s *Store) bool { return s.d.galera }
