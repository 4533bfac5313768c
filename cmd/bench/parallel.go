package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// parallel runs fn(0..n-1) on at most `limit` goroutines and returns the
// first error (the others are cancelled).
func parallel(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		ran      atomic.Int64
		once     sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	for range min(limit, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(ctx, i); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
				ran.Add(1)
			}
		}()
	}
	wg.Wait()
	if firstErr == nil && int(ran.Load()) < n {
		firstErr = fmt.Errorf("%d of %d done: %w", ran.Load(), n, ctx.Err()) // cancelled from outside
	}
	return firstErr
}
