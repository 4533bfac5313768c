package child

import "syscall"

func sysProcAttr(group, dieWithParent bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: group}
	if dieWithParent {
		a.Pdeathsig = syscall.SIGKILL
	}
	return a
}
