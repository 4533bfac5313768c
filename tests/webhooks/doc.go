// Package webhooks holds the shop webhooks' end-to-end tests: a receiver the
// test owns (failing, killed and restarted) and workers killed between a
// move and its webhook's hand-off. It has no code of its own; everything is
// in its _test.go files.
package webhooks
