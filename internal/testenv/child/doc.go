// Package child builds orderflow's binaries and runs them as child
// processes: the one builder and the one process runner behind the test
// harness (internal/testenv), the chaos run (tests/chaos) and the bench
// (cmd/bench). It does not import package testing, so the two programs can
// use it; internal/testenv wraps it with a test's cleanup and failure log.
package child
