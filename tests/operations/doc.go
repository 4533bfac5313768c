// Package operations holds the tests of running orderflow as an operator
// does: a fleet of processes, graceful shutdown under load, slow and idle
// clients cut off, /healthz and /readyz, /metrics and the admin stats, the
// monitoring dashboard behind the admin token, and (build tag cluster) a
// private 3-master Redis Cluster. It has no code of its own; everything is
// in its _test.go files.
package operations
