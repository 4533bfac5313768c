package model

// On Galera a commit is acknowledged once the cluster has ordered it, and
// the other nodes apply it a moment later: a read on another node may not
// see it yet. The workers read with wsrep_sync_wait=1 in their DSN; the API
// does not (docs/ha.md: it answers from what it wrote itself, and a causal
// read costs a round trip through the cluster). The few API reads that
// must not miss another node's commit ask for it one statement at a time.

// Causal returns s with reads that, on a Galera node, first wait until the
// node has applied every write the cluster committed before the read began:
// MariaDB's SET STATEMENT wsrep_sync_wait=1 FOR …, which changes nothing
// for the pooled connection's later statements. On one MariaDB server or
// SQLite every commit is already visible and the reads are unchanged.
// Galera does not wait inside a transaction, so use it on the pool.
func (s *Store) Causal() *Store {
	c := *s
	c.causal = true
	return &c
}

// causalRead is query as s reads it: on Galera, behind a causal wait when
// s is Causal.
func (s *Store) causalRead(query string) string {
	if !s.causal || !s.d.galera {
		return query
	}
	return "SET STATEMENT wsrep_sync_wait=1 FOR " + query
}
