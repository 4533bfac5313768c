// Package httpapi holds the end-to-end tests that drive orderflow through
// its HTTP API as a shop and its buyers would: orders activated at scale on
// MariaDB and on the dev mode's SQLite, the outbox and the order cache,
// duplicate and reused payments, Idempotency-Key, bad input and every body
// field at its bound, the stock counter, the README's two commands and its
// walkthrough, and the docs' links. It has no code of its own; everything
// is in its _test.go files.
package httpapi
