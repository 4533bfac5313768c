package handler

import (
	"encoding/json"
	"net/http"
	"net/url"

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
// login prompt (any user name). With prometheusURL (ORDERFLOW_PROMETHEUS_URL)
// its metrics view charts the asynq_* series that Prometheus scraped.
func (h *Handler) monitoring(rdb redis.UniversalClient, prometheusURL string) http.Handler {
	mon := asynqmon.New(asynqmon.Options{RootPath: "/monitoring", RedisConnOpt: sharedRedis{rdb},
		PayloadFormatter: asynqmon.PayloadFormatterFunc(withStory), PrometheusAddress: prometheusURL})
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

// withStory shows a task's payload as asynqmon does, followed by where the
// operator console tells the story of the order, refund or group it is
// about (asynqmon shows the payload as text, so the path is text too).
func withStory(taskType string, payload []byte) string {
	s := asynqmon.DefaultPayloadFormatter.FormatPayload(taskType, payload)
	var about struct {
		OrderNo  string `json:"order_no"`
		RefundNo string `json:"refund_no"`
		GroupNo  string `json:"group_no"`
	}
	if json.Unmarshal(payload, &about) != nil {
		return s
	}
	for _, no := range []string{about.OrderNo, about.RefundNo, about.GroupNo} {
		if no != "" {
			return s + "  — story: /console/story?no=" + url.QueryEscape(no)
		}
	}
	return s
}
