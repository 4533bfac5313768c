package testenv

import (
	"sync"
	"testing"
)

// inProcessFailpoints serialises the tests of one package that arm
// failpoints in the test process: a point holds one setting, so two tests
// arming the same point for different orders or groups would overwrite
// each other. (Failpoints armed in a child process are that process's own.)
var inProcessFailpoints sync.Mutex

// LockFailpoints holds the test process's failpoints for t until it ends.
func LockFailpoints(t testing.TB) {
	inProcessFailpoints.Lock()
	t.Cleanup(inProcessFailpoints.Unlock)
}
