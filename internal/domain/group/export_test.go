package group

// ErrNotDue is the settle task's answer before the deadline, for the
// package's external tests.
var ErrNotDue = errNotDue
