package main

import (
	"net/http"
	"sync"

	"orderflow/internal/paysim"
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
