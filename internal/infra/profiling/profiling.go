// Package profiling serves Go's runtime profiles (net/http/pprof) on a
// process's own listener, to admins only: a profile shows internals and a
// CPU profile costs CPU while it runs.
package profiling

import (
	"net/http"
	"net/http/pprof"
	"strings"

	"orderflow/internal/infra/operators"
)

// Mount adds /debug/pprof/ to mux, answering only requests that carry an
// admin's token as a Bearer header (401 for no operator's token, 403 for
// a viewer's or an operator's).
func Mount(mux *http.ServeMux, ops *operators.Set) {
	guard := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			op, ok := ops.ByToken(token)
			if !ok {
				http.Error(w, "admin token required", http.StatusUnauthorized)
				return
			}
			if !op.Role.Covers(operators.RoleAdmin) {
				http.Error(w, "forbidden: profiles need the admin role", http.StatusForbidden)
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
