// Package console tests the operator console (/console/) over HTTP against
// the whole stack: the login and session, CSRF, the masked card codes and
// their audited reveal, and actions that act once however often they are
// posted. browser_test.go (build tag browser, `make browser`) drives the
// same pages in headless Chromium; render_bench_test.go (`make
// bench-console`) times them with 100,000 orders in the ledger.
package console
