package tracing

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// on is set once a real provider is installed: the few places that would
// allocate for a span (the HTTP middleware, the ledger transaction's span,
// the HTTP client transport) check it, so a process without tracing runs
// exactly as it did before tracing existed.
var on atomic.Bool

// On reports whether spans are recorded.
func On() bool { return on.Load() }

// Install makes tp the global provider and turns tracing on (Setup's last
// step; tests install an in-memory recorder with it).
func Install(tp trace.TracerProvider) {
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagator)
	on.Store(true)
}

// Setup reads the standard OpenTelemetry variables and installs a provider:
//
//	OTEL_TRACES_EXPORTER          otlp (the default once an endpoint is set), console, none
//	OTEL_EXPORTER_OTLP_ENDPOINT   or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: where spans go (OTLP over HTTP)
//	OTEL_SERVICE_NAME             the service name (default: service, e.g. "orderflow-api")
//
// With none of them set, or OTEL_TRACES_EXPORTER=none, tracing stays off:
// the global no-op provider, nothing installed, nothing to shut down. The
// SDK reads the rest (OTEL_EXPORTER_OTLP_HEADERS, OTEL_TRACES_SAMPLER,
// OTEL_RESOURCE_ATTRIBUTES…) itself. The returned func flushes and stops.
func Setup(ctx context.Context, service string) (func(context.Context) error, error) {
	noop := func(context.Context) error { return nil }
	exporter := os.Getenv("OTEL_TRACES_EXPORTER")
	endpoint := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") + os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if exporter == "none" || (exporter == "" && endpoint == "") {
		return noop, nil
	}
	var exp sdktrace.SpanExporter
	var err error
	switch exporter {
	case "", "otlp":
		if p := os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL"); p != "" && p != "http/protobuf" {
			return noop, fmt.Errorf("setting OTEL_EXPORTER_OTLP_PROTOCOL=%s: only http/protobuf is built in", p)
		}
		exp, err = otlptracehttp.New(ctx)
	case "console":
		exp, err = stdouttrace.New(stdouttrace.WithPrettyPrint())
	default:
		return noop, fmt.Errorf("setting OTEL_TRACES_EXPORTER=%s: want otlp, console or none", exporter)
	}
	if err != nil {
		return noop, fmt.Errorf("tracing exporter: %w", err)
	}
	attrs := resource.Default()
	if os.Getenv("OTEL_SERVICE_NAME") == "" {
		attrs, err = resource.Merge(attrs, resource.NewSchemaless(semconv.ServiceName(service)))
		if err != nil {
			return noop, fmt.Errorf("tracing resource: %w", err)
		}
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(attrs))
	Install(tp)
	return tp.Shutdown, nil
}
