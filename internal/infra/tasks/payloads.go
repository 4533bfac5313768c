package tasks

import (
	"encoding/json"
	"fmt"

	"github.com/hibiken/asynq"
)

// The payloads: what each task names, and their one encoding.

// OrderPayload names the order a task is about and the generation it was queued under.
type OrderPayload struct {
	OrderNo string `json:"order_no"`
	Gen     int    `json:"gen"`
}

// RefundPayload names the refund a task is about.
type RefundPayload struct {
	RefundNo string `json:"refund_no"`
	Gen      int    `json:"gen"`
}

// GroupPayload names the group a settle task is about. Manual is set by an
// operator's retry, the only way a FAILED group settles again.
type GroupPayload struct {
	GroupNo string `json:"group_no"`
	Gen     int    `json:"gen"`
	Manual  bool   `json:"manual,omitempty"`
}

// StatementPayload names the statement run a task reads.
type StatementPayload struct {
	RunID int64 `json:"run_id"`
}

// WebhookPayload names the shop webhook a delivery task posts.
type WebhookPayload struct {
	EventID string `json:"event_id"`
	Gen     int    `json:"gen"`
}

// Encode marshals a payload.
func Encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("tasks: encode %T: %v", v, err)) // payload types are plain structs
	}
	return b
}

// Decode unmarshals a payload; a payload that cannot be decoded will never
// decode, so the error wraps asynq.SkipRetry.
func Decode(task *asynq.Task, v any) error {
	if err := json.Unmarshal(task.Payload(), v); err != nil {
		return fmt.Errorf("decode %s payload: %w: %w", task.Type(), err, asynq.SkipRetry)
	}
	return nil
}
