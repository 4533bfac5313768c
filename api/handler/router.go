// Package handler is the HTTP API: routing, authentication and thin handlers
// that decode, make one use-case call and map the result.
package handler

import (
	"net/http"

	"orderflow/api/console"
	"orderflow/internal/infra/health"
	"orderflow/internal/infra/metrics"
	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/profiling"
	"orderflow/internal/infra/tracing"
	"orderflow/svc"

	"go.uber.org/zap"
)

// Handler serves the API.
type Handler struct {
	uc         *svc.UseCases
	log        *zap.Logger
	adminToken string
	paySecret  string
	sources    metrics.Sources
}

// NewRouter returns the API's routes.
func NewRouter(sc *svc.ServiceContext, uc *svc.UseCases) http.Handler {
	h := &Handler{uc: uc, log: sc.Log, adminToken: sc.Config.AdminToken, paySecret: sc.Config.PaySecret,
		sources: metrics.Sources{Store: sc.Store, Inspector: sc.Inspector, Clock: sc.Clock, Jobs: sc.Config.PeriodicJobs()}}
	hc := &health.Checker{DB: sc.DB, Redis: sc.Redis}
	admin := func(f http.HandlerFunc) http.Handler { return h.requireAdmin(f) }

	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", hc.Live)
	mux.HandleFunc("GET /readyz", hc.Ready)
	if sc.Config.MetricsAddr == "" {
		mux.Handle("GET /metrics", MetricsRouter(sc, uc))
	}
	mux.HandleFunc("GET /api/openapi.yaml", serveOpenAPI)

	mux.HandleFunc("POST /api/v1/orders", h.requireUser(false, h.createOrder))
	mux.HandleFunc("GET /api/v1/orders/{order_no}", h.requireUser(true, h.getOrder))
	mux.HandleFunc("POST /api/v1/orders/{order_no}/cancel", h.requireUser(true, h.cancelOrder))
	mux.HandleFunc("POST /api/v1/orders/{order_no}/pay", h.requireUser(true, h.checkout))
	mux.HandleFunc("POST /api/v1/groups", h.requireUser(false, h.createGroup))
	mux.HandleFunc("POST /api/v1/groups/{group_no}/join", h.requireUser(false, h.joinGroup))
	mux.HandleFunc("GET /api/v1/groups/{group_no}", h.requireUser(true, readByNo(h, "group_no", uc.Groups.Get)))
	mux.HandleFunc("POST /api/v1/payments/notify", h.paymentNotify)
	mux.HandleFunc("POST /api/v1/payments/refund-notify", h.refundNotify)
	mux.HandleFunc("POST /api/v1/payments/alipay/notify", h.providerNotify(pay.NameAlipay))
	mux.HandleFunc("POST /api/v1/payments/wechat/notify", h.providerNotify(pay.NameWechat))
	mux.HandleFunc("POST /api/v1/payments/stripe/webhook", h.providerNotify(pay.NameStripe))

	mux.Handle("POST /api/v1/admin/users", admin(h.createUser))
	mux.Handle("GET /api/v1/admin/users/{id}", admin(h.getUser))
	mux.Handle("POST /api/v1/admin/products", admin(h.createProduct))
	mux.Handle("POST /api/v1/admin/products/{id}/cards", admin(h.addCards))
	mux.Handle("GET /api/v1/admin/products/{id}", admin(readByID(h, uc.Catalog.Product)))
	mux.Handle("GET /api/v1/admin/orders", admin(h.listOrders))
	mux.Handle("GET /api/v1/admin/orders/{order_no}", admin(readByNo(h, "order_no", uc.Orders.GetAdmin)))
	mux.Handle("POST /api/v1/admin/orders/{order_no}/retry", admin(retryByNo(h, "order_no", uc.Orders.Retry)))
	mux.Handle("POST /api/v1/admin/orders/{order_no}/refund", admin(h.refundOrder))
	mux.Handle("GET /api/v1/admin/refunds", admin(h.listRefunds))
	mux.Handle("POST /api/v1/admin/refunds/{refund_no}/retry", admin(h.retryRefund))
	mux.Handle("POST /api/v1/admin/refunds/{refund_no}/resolve", admin(h.resolveRefund))
	mux.Handle("POST /api/v1/admin/groups/{group_no}/retry", admin(retryByNo(h, "group_no", uc.Groups.Retry)))
	mux.Handle("GET /api/v1/admin/stats", admin(h.stats))
	mux.Handle("GET /api/v1/admin/webhooks", admin(h.listWebhooks))
	mux.Handle("POST /api/v1/admin/webhooks/{id}/retry", admin(h.retryWebhook))

	mux.Handle("/monitoring/", h.monitoring(sc.Redis, sc.Config.PrometheusURL))
	console.New(sc, uc).Mount(mux)
	profiling.Mount(mux, sc.Config.AdminToken)

	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]string{"code": "not_found", "message": "no such endpoint"}})
	})
	return tracing.HTTPHandler(mux)
}

// MetricsRouter serves the API's /metrics, behind the admin token when
// ORDERFLOW_METRICS_AUTH=admin: on the API's listener, or alone on
// ORDERFLOW_METRICS_ADDR's.
func MetricsRouter(sc *svc.ServiceContext, uc *svc.UseCases) http.Handler {
	src := metrics.Sources{Store: sc.Store, Inspector: sc.Inspector, Clock: sc.Clock, Jobs: sc.Config.PeriodicJobs()}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics.Guard(metrics.Handler(uc.Metrics, src), sc.Config.MetricsAuth, sc.Config.AdminToken))
	return mux
}
