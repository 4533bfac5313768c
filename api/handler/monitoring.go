package handler

import (
	"encoding/json"
	"net/http"
	"net/url"

	"orderflow/api/sameorigin"
	"orderflow/internal/infra/operators"

	"github.com/hibiken/asynqmon"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// sharedRedis hands asynqmon the process's existing Redis client (standalone,
// Sentinel or Cluster alike) instead of a second connection pool.
type sharedRedis struct{ c redis.UniversalClient }

func (s sharedRedis) MakeRedisClient() any { return s.c }

// monitoring mounts the asynqmon dashboard at /monitoring/ for operators:
// a token as a Bearer header, or as the password of HTTP Basic auth, which
// makes a browser show its login prompt (any user name). Any role reads;
// asynqmon's changes (pauses, deletes, runs: every method but GET and HEAD)
// need an operator or an admin. With prometheusURL (ORDERFLOW_PROMETHEUS_URL)
// its metrics view charts the asynq_* series that Prometheus scraped.
func (h *Handler) monitoring(rdb redis.UniversalClient, prometheusURL string) http.Handler {
	mon := asynqmon.New(asynqmon.Options{RootPath: "/monitoring", RedisConnOpt: sharedRedis{rdb},
		PayloadFormatter: asynqmon.PayloadFormatterFunc(withStory), PrometheusAddress: prometheusURL})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, kept := bearer(r), false
		if _, pass, ok := r.BasicAuth(); ok && token == "" {
			token, kept = pass, true
		}
		op, ok := h.ops.ByToken(token)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="orderflow monitoring", charset="UTF-8"`)
			writeError(w, r, h.log, errUnauthorized)
			return
		}
		if h.forbidden(w, r, op, operators.NeedFor(r.Method)) {
			return
		}
		if crossSiteChange(r, kept) {
			h.log.Warn("cross-site monitoring change refused", zap.String("method", r.Method), zap.String("path", r.URL.Path),
				zap.String("origin", r.Header.Get("Origin")), zap.String("referer", r.Header.Get("Referer")))
			writeError(w, r, h.log, errCrossSite)
			return
		}
		mon.ServeHTTP(w, r.WithContext(operators.WithOperator(r.Context(), op)))
	})
}

// crossSiteChange reports whether a request that changes something (any
// method but GET, HEAD and OPTIONS: asynqmon's pauses, deletes and runs are
// body-less POSTs and DELETEs, which a form or a fetch on any site can
// send) may come from another site's page. The browser attaches the
// Basic-auth password it keeps (browserKept) to such a request, so that
// one must name this site in its Origin or Referer, as every browser's
// own call does; a Bearer header is never attached by a browser on its
// own, so only a foreign origin refuses it.
func crossSiteChange(r *http.Request, browserKept bool) bool {
	if operators.Reads(r.Method) {
		return false
	}
	src := sameorigin.Of(r)
	return src == sameorigin.Cross || (src == sameorigin.Unstated && browserKept)
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
