// Package notify delivers owner and admin notifications to the webhook at
// ORDERFLOW_NOTIFY_URL: each is a ledger row until a 2xx acknowledges it; a
// failed delivery stays pending for the next round; the id is stable, so a
// receiver can drop a redelivery it already handled.
package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/post"
	"orderflow/internal/infra/sign"
	"orderflow/model"

	"go.uber.org/zap"
)

// Deliverer posts pending notifications.
type Deliverer struct {
	Store  *model.Store
	URL    string
	Secret string
	HTTP   *http.Client
	Clock  clock.Clock
	Log    *zap.Logger
}

// message is the webhook body.
type message struct {
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	Subject   string    `json:"subject"`
	Recipient string    `json:"recipient"`
	Message   string    `json:"message"`
	CreatedAt time.Time `json:"created_at"`
}

// Result counts one round.
type Result struct {
	Delivered, Failed int
}

// Deliver posts every pending notification once and records the outcome.
func (d *Deliverer) Deliver(ctx context.Context) (Result, error) {
	var res Result
	if d.URL == "" {
		return res, nil // nowhere to send: they stay pending, visible in stats
	}
	pending, err := d.Store.UndeliveredNotifications(ctx, 200)
	if err != nil {
		return res, fmt.Errorf("deliver notifications: %w", err)
	}
	for _, n := range pending {
		// Claim it first: an overlapping round (or another worker) must not
		// post it too. The lease outlives the post's own timeout.
		now := d.Clock.Now()
		leased, err := d.Store.LeaseNotification(ctx, n.ID, now, now.Add(d.HTTP.Timeout+30*time.Second))
		if err != nil {
			return res, err
		}
		if !leased {
			continue
		}
		if err := d.post(ctx, n); err != nil {
			res.Failed++
			d.Log.Warn("notification delivery failed; stays pending", zap.String("notify_id", n.NotifyID), zap.Error(err))
			if err := d.Store.NoteNotificationFailure(context.WithoutCancel(ctx), n.ID, err.Error()); err != nil {
				return res, err
			}
			continue
		}
		res.Delivered++
		if err := d.Store.MarkNotificationDelivered(context.WithoutCancel(ctx), n.ID, d.Clock.Now()); err != nil {
			return res, err
		}
	}
	return res, nil
}

func (d *Deliverer) post(ctx context.Context, n model.Notification) error {
	body, err := json.Marshal(message{ID: n.NotifyID, Kind: n.Kind, Subject: n.Subject, Recipient: n.Recipient, Message: n.Message, CreatedAt: n.CreatedAt})
	if err != nil {
		return err
	}
	return post.Send(ctx, d.HTTP, d.URL, body, map[string]string{sign.Header: sign.Sum(d.Secret, body)})
}
