// Package tracing is orderflow's OpenTelemetry plumbing: the provider built
// from the standard OTEL_* variables (a no-op when they are unset), and the
// few places a trace crosses a boundary — an HTTP request in, an HTTP call
// out, the outbox row, the asynq task's headers — each carried as a W3C
// traceparent.
package tracing

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Name is the instrumentation scope of every orderflow span.
const Name = "orderflow"

// Tracer returns orderflow's tracer from the global provider: a no-op until
// Setup (or a test) installs a real one, so an untraced process pays a
// function call per span and nothing more.
func Tracer() trace.Tracer { return otel.Tracer(Name) }

// propagator is W3C trace context: the traceparent header, the outbox
// column and the task header all hold the same text.
var propagator = propagation.TraceContext{}

// HeaderKey is the asynq task header (and HTTP header) carrying the trace.
const HeaderKey = "traceparent"

// Traceparent is ctx's span as a W3C traceparent, or "" when ctx carries no
// sampled span (tracing off): nothing is stored or sent then.
func Traceparent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagator.Inject(ctx, c)
	return c[HeaderKey]
}

// WithTraceparent returns ctx with the remote span a traceparent names as
// its parent; an empty or unreadable one leaves ctx as it is.
func WithTraceparent(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return propagator.Extract(ctx, propagation.MapCarrier{HeaderKey: traceparent})
}
