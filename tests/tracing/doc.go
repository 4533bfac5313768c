// Package tracing holds the OpenTelemetry end-to-end test: API and worker
// in-process, spans recorded in memory. It is its own package because the
// trace provider is process-global. It has no code of its own.
package tracing
