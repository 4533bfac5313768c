package chaos

import "syscall"

// childAttrs puts a child in its own process group (a Ctrl-C of the chaos
// run is not delivered to it before we stop it ourselves) and has the
// kernel kill it if the chaos run itself dies, so no private MariaDB or
// worker outlives a crashed run.
func childAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
