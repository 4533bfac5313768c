package model_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A periodic slot is claimed once: the second claim of the same (job,
// slot) — another worker's Scheduler firing too — is refused without an
// error (the claiming task's own retry is let through), another slot or another job is a fresh claim, and the latest slot
// per job is what the catch-up check and the stats read. On both ledgers.
func TestClaimPeriodicSlotOnce(t *testing.T) {
	onBothLedgers(t, func(t *testing.T, b *bundle) {
		slot := time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC)
		claim := func(job string, at time.Time, by string) bool {
			t.Helper()
			ok, err := b.store.ClaimPeriodicSlot(b.ctx, job, at, by, b.now)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		got := []bool{
			claim("periodic:sweep", slot, "w1"),
			claim("periodic:sweep", slot, "w2"),
			claim("periodic:sweep", slot, "w1"), // w1's own retry
			claim("periodic:sweep", slot.In(time.FixedZone("UTC+8", 8*3600)), "w3"),
			claim("periodic:sweep", slot.Add(time.Minute), "w2"),
			claim("periodic:reconcile", slot, "w3"),
		}
		if diff := cmp.Diff([]bool{true, false, true, false, true, true}, got); diff != "" {
			t.Errorf("claims (-want +got):\n%s", diff)
		}
		last, err := b.store.LastPeriodicSlots(b.ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]time.Time{"periodic:sweep": slot.Add(time.Minute), "periodic:reconcile": slot}
		if diff := cmp.Diff(want, last); diff != "" {
			t.Errorf("last slots (-want +got):\n%s", diff)
		}
		if n, err := b.store.PrunePeriodicSlots(b.ctx, "periodic:sweep", slot.Add(time.Second)); err != nil || n != 1 {
			t.Errorf("prune = %d, %v; want the one older sweep slot", n, err)
		}
		if n, err := b.store.PeriodicClaims(b.ctx, "periodic:sweep", slot); err != nil || n != 1 {
			t.Errorf("sweep claims after the prune = %d, %v; want 1", n, err)
		}
	})
}
