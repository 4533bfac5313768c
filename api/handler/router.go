// Package handler is the HTTP API: routing, authentication and thin handlers
// that decode, make one use-case call and map the result.
package handler

import (
	"net/http"
	"strings"

	"orderflow/api/console"
	"orderflow/internal/infra/health"
	"orderflow/internal/infra/metrics"
	"orderflow/internal/infra/operators"
	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/profiling"
	"orderflow/internal/infra/tracing"
	"orderflow/svc"

	"go.uber.org/zap"
)

// Handler serves the API.
type Handler struct {
	uc        *svc.UseCases
	log       *zap.Logger
	ops       *operators.Set
	paySecret string
	sources   metrics.Sources
}

// NewRouter returns the API's routes.
func NewRouter(sc *svc.ServiceContext, uc *svc.UseCases) http.Handler {
	h := &Handler{uc: uc, log: sc.Log, ops: sc.Config.Operators(), paySecret: sc.Config.PaySecret,
		sources: sc.MetricsSources(uc)}
	hc := &health.Checker{DB: sc.DB, Redis: sc.Redis}

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

	for _, rt := range h.adminRoutes(uc) {
		mux.Handle(rt.pattern, h.requireRole(rt.need, rt.serve))
	}

	mux.Handle("/monitoring/", h.monitoring(sc.Redis, sc.Config.PrometheusURL))
	console.New(sc, uc).Mount(mux)
	profiling.Mount(mux, h.ops)

	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]string{"code": "not_found", "message": "no such endpoint"}})
	})
	return tracing.HTTPHandler(mux)
}

// adminRoute is one admin endpoint and the least role it needs.
type adminRoute struct {
	pattern string
	need    operators.Role
	serve   http.HandlerFunc
}

// adminRoutes is the admin API. A read needs any role and an action an
// operator (operators.NeedFor); creating users and products and adding
// cards needs an admin.
func (h *Handler) adminRoutes(uc *svc.UseCases) []adminRoute {
	byMethod := func(pattern string, serve http.HandlerFunc) adminRoute {
		method, _, _ := strings.Cut(pattern, " ")
		return adminRoute{pattern, operators.NeedFor(method), serve}
	}
	adminOnly := func(pattern string, serve http.HandlerFunc) adminRoute {
		return adminRoute{pattern, operators.RoleAdmin, serve}
	}
	return []adminRoute{
		adminOnly("POST /api/v1/admin/users", h.createUser),
		byMethod("GET /api/v1/admin/users/{id}", h.getUser),
		adminOnly("POST /api/v1/admin/products", h.createProduct),
		adminOnly("POST /api/v1/admin/products/{id}/cards", h.addCards),
		byMethod("GET /api/v1/admin/products/{id}", readByID(h, uc.Catalog.Product)),
		byMethod("GET /api/v1/admin/orders", h.listOrders),
		byMethod("GET /api/v1/admin/orders/{order_no}", readByNo(h, "order_no", uc.Orders.GetAdmin)),
		byMethod("POST /api/v1/admin/orders/{order_no}/retry", retryByNo(h, "order_no", uc.Orders.Retry)),
		byMethod("POST /api/v1/admin/orders/{order_no}/refund", h.refundOrder),
		byMethod("POST /api/v1/admin/orders/{order_no}/payments", h.confirmPayment),
		byMethod("POST /api/v1/admin/orders/{order_no}/refunds", h.refundOrderPart),
		byMethod("GET /api/v1/admin/refunds", h.listRefunds),
		byMethod("POST /api/v1/admin/refunds/{refund_no}/retry", h.retryRefund),
		byMethod("POST /api/v1/admin/refunds/{refund_no}/resolve", h.resolveRefund),
		byMethod("POST /api/v1/admin/groups/{group_no}/retry", retryByNo(h, "group_no", uc.Groups.Retry)),
		byMethod("GET /api/v1/admin/stats", h.stats),
		byMethod("GET /api/v1/admin/webhooks", h.listWebhooks),
		byMethod("POST /api/v1/admin/webhooks/{id}/retry", h.retryWebhook),
		byMethod("GET /api/v1/admin/audit", h.auditTrail),
		byMethod("POST /api/v1/admin/statements/runs", h.runStatement),
		byMethod("GET /api/v1/admin/statements/runs/{run_id}", h.getStatementRun),
		byMethod("GET /api/v1/admin/statements/breaks", h.listStatementBreaks),
		byMethod("POST /api/v1/admin/statements/breaks/{id}/resolve", h.resolveStatementBreak),
	}
}

// AdminRoute is an admin endpoint's pattern ("POST /api/v1/admin/users")
// and the least role it needs.
type AdminRoute struct {
	Pattern string
	Need    operators.Role
}

// AdminRoutes lists the admin API as the router mounts it, for the tests
// that must cover every admin endpoint.
func AdminRoutes() []AdminRoute {
	var out []AdminRoute
	for _, rt := range (&Handler{}).adminRoutes(&svc.UseCases{}) {
		out = append(out, AdminRoute{Pattern: rt.pattern, Need: rt.need})
	}
	return out
}

// MetricsRouter serves the API's /metrics, behind the operators' tokens when
// ORDERFLOW_METRICS_AUTH=admin: on the API's listener, or alone on
// ORDERFLOW_METRICS_ADDR's.
func MetricsRouter(sc *svc.ServiceContext, uc *svc.UseCases) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics.Guard(metrics.Handler(uc.Metrics, sc.MetricsSources(uc)), sc.Config.MetricsAuth, sc.Config.Operators()))
	return mux
}
