//go:build !linux

package chaos

import "syscall"

// childAttrs puts a child in its own process group (a Ctrl-C of the chaos
// run is not delivered to it before we stop it ourselves).
func childAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
