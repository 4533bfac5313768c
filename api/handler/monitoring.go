package handler

import (
	"net/http"

	"github.com/hibiken/asynqmon"
	"github.com/redis/go-redis/v9"
)

// sharedRedis hands asynqmon the process's existing Redis client (standalone,
// Sentinel or Cluster alike) instead of a second connection pool.
type sharedRedis struct{ c redis.UniversalClient }

func (s sharedRedis) MakeRedisClient() any { return s.c }

// monitoring mounts the asynqmon dashboard at /monitoring/. It can delete
// and rerun tasks, so it is admin-only: the admin token as a Bearer header,
// or as the password of HTTP Basic auth, which makes a browser show its
// login prompt (any user name).
func (h *Handler) monitoring(rdb redis.UniversalClient) http.Handler {
	mon := asynqmon.New(asynqmon.Options{RootPath: "/monitoring", RedisConnOpt: sharedRedis{rdb}})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := bearer(r)
		if _, pass, ok := r.BasicAuth(); ok && token == "" {
			token = pass
		}
		if !h.isAdmin(token) {
			w.Header().Set("WWW-Authenticate", `Basic realm="orderflow monitoring", charset="UTF-8"`)
			writeError(w, r, h.log, errUnauthorized)
			return
		}
		mon.ServeHTTP(w, r)
	})
}
