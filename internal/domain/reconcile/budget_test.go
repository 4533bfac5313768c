package reconcile_test

import (
	"strings"
	"testing"

	"orderflow/internal/domain/reconcile"
	"orderflow/internal/infra/tasks"
	"orderflow/svc"
)

// Done-when 5 of issue 13: every task type's retry span (at the default
// settings) covers the outage it is documented to ride out, and when its
// retries are spent the object is handed on: to the sweep (which walks
// objects of that type), or for a periodic job to its next slot.
func TestTaskTableBudgetsEndInTheSweepsHands(t *testing.T) {
	table := tasks.NewTable(svc.Defaults().TaskConfig())
	swept := (&reconcile.Sweeper{}).SweptTypes()
	for typ, spec := range table {
		span := spec.RetrySpan()
		t.Logf("%-22s MaxRetry %2d  retry span %-10v rides out %-8v exhausted → %d", typ, spec.MaxRetry, span, spec.RidesOut, spec.Exhausted)
		if span < spec.RidesOut {
			t.Errorf("%s: retry span %v is shorter than the %v outage it is documented to ride out", typ, span, spec.RidesOut)
		}
		switch spec.Exhausted {
		case tasks.ExhaustedToSweep, tasks.ExhaustedToTerminal:
			if !swept[typ] {
				t.Errorf("%s: exhaustion is handed to the sweep, but no sweep kind walks its objects", typ)
			}
		case tasks.ExhaustedToNextSlot:
			if spec.Retention <= 0 {
				t.Errorf("%s: a periodic job without retention cannot refuse a second enqueue of its slot", typ)
			}
		default:
			t.Errorf("%s: exhaustion not handed to anyone (Exhausted %d)", typ, spec.Exhausted)
		}
		if strings.HasPrefix(typ, "periodic:") && spec.Exhausted != tasks.ExhaustedToNextSlot {
			t.Errorf("%s: a periodic job's exhaustion should be its next slot", typ)
		}
	}
	for typ := range swept {
		if _, ok := table[typ]; !ok {
			t.Errorf("the sweep walks objects of %s, which the table does not know", typ)
		}
	}
}
