package model_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A console session is live from its start until its one end (a second
// log-out finds it ended), and a start deletes the sessions already
// expired. On both ledgers.
func TestConsoleSessionEndsOnce(t *testing.T) {
	onBothLedgers(t, func(t *testing.T, b *bundle) {
		const ttl = 12 * time.Hour
		live := func(id string) bool {
			t.Helper()
			ok, err := b.store.ConsoleSessionLive(b.ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		end := func(id string) bool {
			t.Helper()
			ok, err := b.store.EndConsoleSession(b.ctx, id, b.now)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		old, a, other := "00000000000000000000000000000old", "0000000000000000000000000000000a", "000000000000000000000000000other"
		if err := b.store.StartConsoleSession(b.ctx, old, b.now.Add(-ttl-time.Hour), b.now.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		if !live(old) {
			t.Fatalf("a started session is not live")
		}
		if err := b.store.StartConsoleSession(b.ctx, a, b.now, b.now.Add(ttl)); err != nil {
			t.Fatal(err)
		}
		got := []bool{live(old), live(a), end(a), end(a), live(a), end(other), live(other)}
		// the expired one pruned by the second start; a live, ended once; other never started
		if diff := cmp.Diff([]bool{false, true, true, false, false, false, false}, got); diff != "" {
			t.Errorf("live/end (-want +got):\n%s", diff)
		}
	})
}
