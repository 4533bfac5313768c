package outbox_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"orderflow/internal/infra/outbox"
	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"
	"orderflow/model"
	"orderflow/svc"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
)

// setup is a relay on the test's own database and Redis DB.
func setup(t *testing.T) (*svc.ServiceContext, *outbox.Relay) {
	t.Helper()
	sc, err := svc.New(testenv.Config(t), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sc.Close() })
	return sc, outbox.New(sc.Store, sc.Asynq, sc.Inspector, sc.Redis, sc.Tasks, zap.NewNop())
}

func insertRows(t *testing.T, store *model.Store, typ string, ids ...string) {
	t.Helper()
	now := time.Now()
	for _, id := range ids {
		if err := store.InsertOutboxLater(context.Background(), model.TaskRow(id, typ, []byte(`{}`), now.Add(time.Hour), now)); err != nil {
			t.Fatal(err)
		}
	}
}

func closeIDs(from, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = tasks.ID(tasks.TypeOrderClose, fmt.Sprintf("O%04d", from+i), 1)
	}
	return ids
}

// waiting lists the task IDs still in the outbox.
func waiting(t *testing.T, store *model.Store) []string {
	t.Helper()
	rows, err := store.OutboxBetween(context.Background(), 0, math.MaxInt64, 10000)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, r := range rows {
		ids = append(ids, r.TaskID)
	}
	return ids
}

// One poller pass reads the outbox a page (DrainBatch rows) at a time until
// a short page, takes only rows up to the id it was given (younger rows are
// their writers' fast path's), moves and deletes every row asynq accepts,
// and leaves a row of an unknown type behind without stopping the rows
// after it.
func TestDrainPagesUpToTheGivenRow(t *testing.T) {
	t.Parallel()
	sc, relay := setup(t)
	ctx := context.Background()
	old := closeIDs(0, 2*outbox.DrainBatch+17) // three pages, the last short
	insertRows(t, sc.Store, tasks.TypeOrderClose, old[:5]...)
	insertRows(t, sc.Store, "no:such:type", "unknown:1")
	insertRows(t, sc.Store, tasks.TypeOrderClose, old[5:]...)
	upTo, err := sc.Store.OutboxMaxID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	young := closeIDs(len(old), 3)
	insertRows(t, sc.Store, tasks.TypeOrderClose, young...)

	moved, err := relay.Drain(ctx, upTo)
	if err != nil {
		t.Fatalf("Drain: %v", err)
	}
	if moved != len(old) {
		t.Errorf("Drain moved %d rows, want %d", moved, len(old))
	}
	if diff := cmp.Diff(append([]string{"unknown:1"}, young...), waiting(t, sc.Store)); diff != "" {
		t.Errorf("rows left in the outbox (-want +got):\n%s", diff)
	}
	info, err := sc.Inspector.GetQueueInfo(tasks.QueueClose)
	if err != nil {
		t.Fatal(err)
	}
	if info.Scheduled != len(old) {
		t.Errorf("asynq holds %d scheduled close tasks, want %d", info.Scheduled, len(old))
	}

	// A second pass over the same rows finds nothing; one up to the newest
	// row takes the young rows and still leaves the unknown one.
	if moved, err = relay.Drain(ctx, upTo); err != nil || moved != 0 {
		t.Errorf("second Drain = %d, %v; want 0, nil", moved, err)
	}
	newest, err := sc.Store.OutboxMaxID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if moved, err = relay.Drain(ctx, newest); err != nil || moved != len(young) {
		t.Errorf("Drain up to the newest row = %d, %v; want %d, nil", moved, err, len(young))
	}
	if diff := cmp.Diff([]string{"unknown:1"}, waiting(t, sc.Store)); diff != "" {
		t.Errorf("rows left in the outbox (-want +got):\n%s", diff)
	}
}

// A row whose task asynq already holds (an earlier push got through, its
// delete was lost) is done too: the relay deletes it instead of retrying it
// for ever.
func TestResendDeletesRowsAsynqAlreadyHolds(t *testing.T) {
	t.Parallel()
	sc, relay := setup(t)
	ctx := context.Background()
	ids := closeIDs(0, 3)
	insertRows(t, sc.Store, tasks.TypeOrderClose, ids...)
	rows, err := sc.Store.OutboxBetween(ctx, 0, math.MaxInt64, 10)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := relay.Resend(ctx, rows[:1]); err != nil || n != 1 {
		t.Fatalf("first Resend = %d, %v; want 1, nil", n, err)
	}
	insertRows(t, sc.Store, tasks.TypeOrderClose, ids[0]) // its delete "lost": the row is back
	rows, err = sc.Store.OutboxBetween(ctx, 0, math.MaxInt64, 10)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := relay.Resend(ctx, rows); err != nil || n != len(ids) {
		t.Fatalf("Resend = %d, %v; want %d, nil", n, err, len(ids))
	}
	if diff := cmp.Diff([]string{}, waiting(t, sc.Store)); diff != "" {
		t.Errorf("rows left in the outbox (-want +got):\n%s", diff)
	}
}
