package operations

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"orderflow/api/handler"
	"orderflow/internal/testenv"
	"orderflow/svc"
)

// ORDERFLOW_METRICS_AUTH=admin puts both processes' /metrics behind the
// admin token (401 with the usual error body without it), and
// ORDERFLOW_METRICS_ADDR moves the API's /metrics off the API's listener.
// ORDERFLOW_PROMETHEUS_URL is where asynqmon's metrics view asks for the
// asynq_* series.
func TestMetricsAccessSettings(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
	}))
	defer prom.Close()
	s := testenv.Start(t, testenv.Options{Configure: func(c *svc.Config) {
		c.MetricsAuth, c.PrometheusURL = "admin", prom.URL
	}})
	admin := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+s.Config.AdminToken) }
	wrong := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+s.Config.AdminToken+"x") }
	for where, url := range map[string]string{"api": s.APIURL + "/metrics", "worker": "http://" + s.Worker.Addr() + "/metrics"} {
		for name, edit := range map[string]func(*http.Request){"no token": nil, "wrong token": wrong} {
			st, body, err := get(url, edit)
			if err != nil || st != 401 || !strings.Contains(body, `"code":"unauthorized"`) {
				t.Errorf("%s /metrics with %s: %d %q (%v), want 401 unauthorized", where, name, st, body, err)
			}
		}
		if st, body, err := get(url, admin); err != nil || st != 200 || !strings.Contains(body, "asynq_queue_size") {
			t.Errorf("%s /metrics with the admin token: %d (%v), want 200 with asynq_* series", where, st, err)
		}
	}

	st, body, err := get(s.APIURL+"/monitoring/api/metrics?endtime=1800000000&duration=3600", admin)
	if err != nil || st != 200 {
		t.Fatalf("asynqmon metrics view: %d %q (%v)", st, body, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) == 0 || !strings.HasPrefix(asked[0], "/api/v1/query_range?") || !strings.Contains(strings.Join(asked, " "), "asynq_") {
		t.Errorf("Prometheus was asked %v, want query_range calls over asynq_* series", asked)
	}

	// A separate listener: the API's own has no /metrics, MetricsRouter has.
	cfg := s.Config
	cfg.MetricsAddr, cfg.MetricsAuth = "127.0.0.1:0", "none"
	sc := *s.SC
	sc.Config = cfg
	api := httptest.NewServer(handler.NewRouter(&sc, s.UC))
	defer api.Close()
	if st, _, _ := get(api.URL+"/metrics", nil); st != 404 {
		t.Errorf("API listener /metrics with ORDERFLOW_METRICS_ADDR set: %d, want 404", st)
	}
	own := httptest.NewServer(handler.MetricsRouter(&sc, s.UC))
	defer own.Close()
	if st, body, _ := get(own.URL+"/metrics", nil); st != 200 || !strings.Contains(body, "orderflow_orders") {
		t.Errorf("metrics listener /metrics: %d, want 200 with orderflow_* series", st)
	}
}
