package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"time"
)

// captureProfiles fetches a CPU profile of d from the API and each worker
// (their admin-only /debug/pprof/profile), and takes the bench's own, into
// dir/<name>.pprof (the children's names, and label-bench), starting at
// `at`; it returns at once and the wait func blocks until all are written.
// Read them with `go tool pprof -top <binary> <file>`.
func captureProfiles(ctx context.Context, e *benchEnv, s *stack, label, dir string, at time.Time, d time.Duration) (wait func()) {
	var wg sync.WaitGroup
	capture := func(name string, write func(path string) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(at)):
			}
			path := filepath.Join(dir, name+".pprof")
			if err := write(path); err != nil {
				logf("profile %s: %v", name, err)
				return
			}
			logf("profile %s: %s", name, path)
		}()
	}
	for _, c := range s.all() {
		capture(c.Name, func(path string) error { return fetchProfile(ctx, e, c.addr, path, d) })
	}
	// The load generator itself: its CPU is taken from the stack it drives.
	capture(label+"-bench", func(path string) error { return profileSelf(path, d) })
	return wg.Wait
}

func fetchProfile(ctx context.Context, e *benchEnv, addr, path string, d time.Duration) error {
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(d.Seconds()))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+e.adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// profileSelf writes the bench's own CPU profile of d to path.
func profileSelf(path string, d time.Duration) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return err
	}
	time.Sleep(d)
	pprof.StopCPUProfile()
	return f.Close()
}
