// Package crashes holds orderflow's crash and fault tests: workers killed at
// failpoints, poison orders, Redis lost while payments arrive, archived
// tasks. It has no code of its own; everything is in its _test.go files.
package crashes
