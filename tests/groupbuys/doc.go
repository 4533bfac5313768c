// Package groupbuys holds the end-to-end tests of group-buys and owner/admin
// notifications: settlement resuming at the charge step
// after a crash or a lost database connection, concurrent settle runs, the
// 1-2-4-8-16 s retry budget shared across workers, webhook delivery, Redis
// loss and a 1,000-participant settlement. It has no non-test code.
package groupbuys
