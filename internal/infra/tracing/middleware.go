package tracing

import (
	"context"
	"net/http"

	"github.com/hibiken/asynq"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// HTTPHandler gives every request a server span named by its route
// ("POST /api/v1/orders/{order_no}/cancel": numbers stay out of span
// names), continuing a caller's traceparent. Off, it is h itself.
func HTTPHandler(h http.Handler) http.Handler {
	if !On() {
		return h
	}
	return otelhttp.NewHandler(h, "http", otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
		if r.Pattern != "" {
			return r.Pattern
		}
		return r.Method
	}))
}

// Transport gives every outgoing call (a payment provider, the shop's
// webhook receiver) a client span and a traceparent header. Off, it is
// base itself.
func Transport(base http.RoundTripper) http.RoundTripper {
	if !On() {
		return base
	}
	if base == nil {
		base = http.DefaultTransport
	}
	return otelhttp.NewTransport(base)
}

// TaskMiddleware gives every asynq task a consumer span, the child of the
// span its traceparent header names (the relay's hand-off), so a task's
// work joins the trace of the request that caused it.
func TaskMiddleware(next asynq.Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		if !On() {
			return next.ProcessTask(ctx, t)
		}
		ctx = WithTraceparent(ctx, t.Headers()[HeaderKey])
		id, _ := asynq.GetTaskID(ctx)
		retried, _ := asynq.GetRetryCount(ctx)
		ctx, span := Tracer().Start(ctx, "task "+t.Type(), trace.WithSpanKind(trace.SpanKindConsumer),
			trace.WithAttributes(attribute.String("orderflow.task_id", id), attribute.Int("orderflow.retried", retried)))
		defer span.End()
		err := next.ProcessTask(ctx, t)
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		return err
	})
}
