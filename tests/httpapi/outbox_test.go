package httpapi

import (
	"context"
	"fmt"
	"testing"
	"time"

	"orderflow/internal/infra/tasks"
	"orderflow/internal/testenv"
)

// The outbox poller pages through the waiting rows: a full page of rows it
// cannot enqueue (a task type this version does not know, written by a newer
// one) stays behind without stopping the row after it.
func TestOutboxPollerPagesPastRowsItCannotSend(t *testing.T) {
	s := testenv.Start(t, testenv.Options{})
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	insert := func(taskID, typ string, payload []byte) {
		t.Helper()
		if err := s.SC.DB.Exec(`INSERT INTO outbox (task_id, task_type, payload, process_at, created_at) VALUES (?, ?, ?, ?, ?)`,
			taskID, typ, payload, now, now).Error; err != nil {
			t.Fatal(err)
		}
	}
	for i := range 250 {
		insert(fmt.Sprintf("from-a-newer-version:%d", i), "from:a-newer-version", []byte(`{}`))
	}
	// A close for an order that does not exist: the worker skips it.
	known := tasks.ID(tasks.TypeOrderClose, "ONOSUCHORDER", 1)
	insert(known, tasks.TypeOrderClose, tasks.Encode(tasks.OrderPayload{OrderNo: "ONOSUCHORDER", Gen: 1}))

	testenv.Eventually(t, 5*time.Second, "the known row after 250 unknown ones enqueued and deleted", func() (bool, error) {
		has, err := s.SC.Store.OutboxHas(ctx, known)
		return !has, err
	})
	var unknown int64
	if err := s.SC.DB.Raw(`SELECT COUNT(*) FROM outbox WHERE task_type = 'from:a-newer-version'`).Scan(&unknown).Error; err != nil || unknown != 250 {
		t.Errorf("%d unknown rows left (err %v), want all 250: they wait for a version that knows them", unknown, err)
	}
}
