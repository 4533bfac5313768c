// Package closeandrefund holds the end-to-end tests of the order life's end:
// orders closing at expiry or on cancel while payments race them, stock
// coming back and never overselling, late, duplicate and wrong payments
// refunded exactly once through a faulty provider, reconciliation after
// Redis is wiped, and the operator's refund tools. It has no code of its
// own; everything is in its _test.go files.
package closeandrefund
