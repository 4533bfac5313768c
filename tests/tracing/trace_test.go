package tracing

import (
	"strings"
	"testing"
	"time"

	"orderflow/internal/infra/tracing"
	"orderflow/internal/testenv"
	"orderflow/model"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// recorder holds every span the process ends: installed before any stack
// is built, since the router and the HTTP clients check at construction
// whether tracing is on.
var recorder = tracetest.NewSpanRecorder()

func TestMain(m *testing.M) {
	tracing.Install(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder)))
	testenv.Main(m)
}

// TestOneOrderOneTrace is issue 19's trace done-when: one order created,
// paid and activated is ONE trace holding the API's create request span,
// the outbox hand-off of its activation task and the worker's activation
// span, each the parent of the next down the chain.
func TestOneOrderOneTrace(t *testing.T) {
	s := testenv.Start(t, testenv.Options{})
	_, _, o := s.NewCardOrder(t, "trace-card", 300, 1)
	s.PayOrder(t, o, "")
	s.WaitStatus(t, o.OrderNo, model.OrderFinished, 30*time.Second)

	find := func(what string, match func(sdktrace.ReadOnlySpan) bool) sdktrace.ReadOnlySpan {
		var found sdktrace.ReadOnlySpan
		testenv.Eventually(t, 10*time.Second, what, func() (bool, error) {
			for _, sp := range recorder.Ended() {
				if match(sp) {
					found = sp
					return true, nil
				}
			}
			return false, nil
		})
		return found
	}
	create := find("the create request's span", func(sp sdktrace.ReadOnlySpan) bool {
		return sp.Name() == "POST /api/v1/orders"
	})
	activate := find("the worker's activation span of "+o.OrderNo, func(sp sdktrace.ReadOnlySpan) bool {
		return sp.Name() == "task order:activate" && sp.SpanContext().TraceID() == create.SpanContext().TraceID()
	})
	handoff := find("the outbox hand-off of the activation", func(sp sdktrace.ReadOnlySpan) bool {
		return sp.Name() == "outbox.enqueue order:activate" && sp.SpanContext().SpanID() == activate.Parent().SpanID()
	})
	if handoff.SpanContext().TraceID() != create.SpanContext().TraceID() {
		t.Fatalf("hand-off in trace %s, create in %s", handoff.SpanContext().TraceID(), create.SpanContext().TraceID())
	}
	pay := find("the payment's span in the order's trace", func(sp sdktrace.ReadOnlySpan) bool {
		return sp.Name() == "order.pay" && sp.SpanContext().SpanID() == handoff.Parent().SpanID()
	})
	if pay.Parent().SpanID() != create.SpanContext().SpanID() {
		t.Errorf("order.pay's parent is %s, want the create request's span %s", pay.Parent().SpanID(), create.SpanContext().SpanID())
	}
	if len(pay.Links()) != 1 || !pay.Links()[0].SpanContext.IsValid() {
		t.Errorf("order.pay links %v, want the notification request's span", pay.Links())
	}
	// The ledger's transactions and the provider call are spans too.
	var names []string
	for _, sp := range recorder.Ended() {
		if sp.SpanContext().TraceID() == create.SpanContext().TraceID() {
			names = append(names, sp.Name())
		}
	}
	joined := strings.Join(names, ", ")
	for _, want := range []string{"ledger.tx", "task order:activate", "outbox.enqueue order:activate", "order.pay"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the order's trace has no %q span; it has: %s", want, joined)
		}
	}
	t.Logf("one trace %s: %s", create.SpanContext().TraceID(), joined)
}
