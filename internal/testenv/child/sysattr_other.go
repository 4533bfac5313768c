//go:build !linux

package child

import "syscall"

// sysProcAttr: only Linux can tie a child's life to its parent's.
func sysProcAttr(group, _ bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: group}
}
