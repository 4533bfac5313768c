// Package profiling serves Go's runtime profiles (net/http/pprof) on a
// process's own listener, admin-only: a profile shows internals and a CPU
// profile costs CPU while it runs.
package profiling

import (
	"crypto/subtle"
	"net/http"
	"net/http/pprof"
	"strings"
)

// Mount adds /debug/pprof/ to mux, answering only requests that carry the
// admin token as a Bearer header.
func Mount(mux *http.ServeMux, adminToken string) {
	guard := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if adminToken == "" || subtle.ConstantTimeCompare([]byte(token), []byte(adminToken)) != 1 {
				http.Error(w, "admin token required", http.StatusUnauthorized)
				return
			}
			h(w, r)
		}
	}
	mux.HandleFunc("GET /debug/pprof/", guard(pprof.Index))
	mux.HandleFunc("GET /debug/pprof/cmdline", guard(pprof.Cmdline))
	mux.HandleFunc("GET /debug/pprof/profile", guard(pprof.Profile))
	mux.HandleFunc("GET /debug/pprof/symbol", guard(pprof.Symbol))
	mux.HandleFunc("GET /debug/pprof/trace", guard(pprof.Trace))
}
