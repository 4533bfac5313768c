package main

import (
	"context"
	"net"
	"net/http"
	"sync"

	"orderflow/internal/paysim"
	"orderflow/svc"
)

// simHandler serves the in-process payment simulator. The simulator needs
// the API's address to send notifications to, and the API needs the
// simulator's (ORDERFLOW_PAY_URL) to start, so the listener comes first and
// the simulator is plugged in once the API runs.
type simHandler struct {
	mu  sync.RWMutex
	sim *paysim.Sim
	h   http.Handler
}

func (s *simHandler) set(sim *paysim.Sim) {
	s.mu.Lock()
	s.sim, s.h = sim, sim.Handler()
	s.mu.Unlock()
}

func (s *simHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.RLock()
	h := s.h
	s.mu.RUnlock()
	if h == nil {
		http.Error(w, "simulator starting", http.StatusServiceUnavailable)
		return
	}
	h.ServeHTTP(w, r)
}

func (s *simHandler) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sim != nil {
		s.sim.Close()
	}
}

// startWithSim starts a stack and an in-process payment simulator that
// notifies its API (ORDERFLOW_PAY_URL points the product at it).
func startWithSim(ctx context.Context, e *benchEnv, sc stackConfig) (*stack, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	e.paysimURL = "http://" + ln.Addr().String()
	sim := &simHandler{}
	srv := svc.Defaults().HTTPServer(sim)
	go func() { _ = srv.Serve(ln) }()
	s, err := startStack(ctx, e.bins, e, sc)
	done := func() { srv.Close(); sim.close() }
	if err != nil {
		if s != nil {
			_ = s.stop()
		}
		done()
		return nil, nil, err
	}
	sim.set(paysim.New(paysim.Config{Secret: e.paySecret, NotifyBaseURL: s.apiURL}))
	return s, done, nil
}
