package testenv

import "sync"

// AtOnce calls call(0) … call(n-1), each on a goroutine of its own held at
// one gate that opens once all n are started, and returns when every call
// has returned: a burst of racing requests.
func AtOnce(n int, call func(i int)) {
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-gate
			call(i)
		})
	}
	close(gate)
	wg.Wait()
}
