package svc

import (
	"net/http"
	"time"

	"orderflow/internal/domain/account"
	"orderflow/internal/domain/backlog"
	"orderflow/internal/domain/catalog"
	"orderflow/internal/domain/dispute"
	"orderflow/internal/domain/group"
	"orderflow/internal/domain/order"
	"orderflow/internal/domain/payment"
	"orderflow/internal/domain/reconcile"
	"orderflow/internal/domain/refund"
	"orderflow/internal/domain/statement"
	"orderflow/internal/domain/trail"
	"orderflow/internal/domain/webhook"
	"orderflow/internal/infra/metrics"
	"orderflow/internal/infra/notify"
	"orderflow/internal/infra/outbox"
	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/post"
	"orderflow/internal/infra/stock"
	"orderflow/internal/infra/tasks"
	"orderflow/internal/infra/tracing"
	"orderflow/model"
)

// webhookTask is the outbox row of a webhook's delivery task: the task
// table's type, an ID per event and generation, due now.
func webhookTask(eventID string, gen int, now time.Time) *model.OutboxRow {
	return model.TaskRow(tasks.ID(tasks.TypeWebhookDeliver, eventID, gen), tasks.TypeWebhookDeliver,
		tasks.Encode(tasks.WebhookPayload{EventID: eventID, Gen: gen}), now, now)
}

// UseCases are the aggregates' services both binaries call.
type UseCases struct {
	Relay      *outbox.Relay
	Metrics    *metrics.Metrics
	Orders     *order.Service
	Refunds    *refund.Service
	Accounts   *account.Service
	Catalog    *catalog.Service
	Groups     *group.Service
	Notifier   *notify.Deliverer
	Reconciler *reconcile.Reconciler
	// Statements reconciles the ledger with the providers' statements.
	Statements *statement.Service
	Sweeper    *reconcile.Sweeper
	Backlog    *backlog.Service
	// Pay is the enabled providers; Payments applies their notifications.
	Pay      *pay.Registry
	Payments *payment.Notifications
	Webhooks *webhook.Service
	// Audit reads the admin actions' trail (the actions write it themselves).
	Audit *trail.Trail
}

// NewUseCases builds every use-case service on the context's dependencies.
// Tests that swap the clock do so on the ServiceContext before calling it.
// It installs the Store's after-commit work, so call it once per context.
func (s *ServiceContext) NewUseCases() *UseCases {
	c := s.Config
	relay := outbox.New(s.Store, s.Asynq, s.Inspector, s.Redis, s.Tasks, s.Log)
	s.Store.SetAfterCommit(afterCommit(relay, s.Redis, s.Log))
	if c.WebhookURL != "" {
		s.Store.SetWebhooks(model.Webhooks{EventFor: webhook.EventFor, Task: webhookTask})
	}
	webhookHTTP := &http.Client{Timeout: 10 * time.Second, Transport: tracing.Transport(nil)}
	webhooks := &webhook.Service{Store: s.Store, URL: c.WebhookURL, Secret: c.WebhookSecret,
		Post: post.With(webhookHTTP), PostTimeout: webhookHTTP.Timeout, Clock: s.Clock, Log: s.Log}
	m := metrics.New(s.Redis)
	batch := c.ActivateBatch
	if s.Store.Dialect() == "sqlite" {
		// One writer at a time: a batch would only hold its lock longer.
		batch = 1
	}
	orders := order.New(order.Deps{
		Store: s.Store, Redis: s.Redis, Clock: s.Clock, Log: s.Log, Metrics: m, Pay: s.Pay,
	}, order.Settings{
		OrderTTL: c.OrderTTL.D(), ClaimTimeout: c.ClaimTimeout.D(), MaxPending: c.MaxPending,
		MaxAttempts: c.MaxAttempts, CacheTTL: c.CacheTTL.D(), IdempotencyTTL: c.IdempotencyTTL.D(),
		ActivateBatch: batch, WorkerID: s.WorkerID,
	})
	refunds := refund.New(refund.Deps{
		Store: s.Store,
		Pay:   s.Pay,
		Clock: s.Clock, Log: s.Log, Metrics: m,
	}, refund.Settings{MaxAttempts: c.RefundMaxAttempts, AlertAfter: c.RefundAlertAfter.D()})
	groups := group.New(group.Deps{Store: s.Store, Redis: s.Redis, Clock: s.Clock, Log: s.Log})
	statements := statement.New(statement.Deps{Store: s.Store, Pay: s.Pay, Orders: orders, Clock: s.Clock, Log: s.Log,
		Lookback: c.StatementLookback})
	sweeper := &reconcile.Sweeper{
		Store: s.Store, Redis: s.Redis, Relay: relay, Queue: tasks.Enqueuer{Table: s.Tasks, Client: s.Asynq}, Tasks: s.Tasks,
		Orders: orders, Refunds: refunds, Groups: groups, Webhooks: webhooks, Statements: statements, Stock: stock.NewCounter(s.Redis), Metrics: m, Clock: s.Clock, Log: s.Log,
		Page: c.SweepPageSize, Budget: c.SweepInterval.D() / 2,
		RelayInterval: c.RelayInterval.D(), NotifyInterval: c.NotifyInterval.D(),
		Interval: c.SweepInterval.D(), PayQueryAfter: c.PayQueryAfter.D(),
	}
	payments := &payment.Notifications{Orders: orders, Refunds: refunds, Disputes: dispute.New(s.Store, s.Clock, s.Log),
		Statements: statements, Log: s.Log}
	return &UseCases{
		Pay:      s.Pay,
		Payments: payments,
		Sweeper:  sweeper,
		Webhooks: webhooks,
		Audit:    &trail.Trail{Store: s.Store},
		Backlog:  &backlog.Service{Store: s.Store, Redis: s.Redis, Clock: s.Clock},
		Groups:   groups,
		Notifier: &notify.Deliverer{Store: s.Store, URL: c.NotifyURL, Secret: c.PaySecret,
			HTTP: &http.Client{Timeout: 10 * time.Second}, Clock: s.Clock, Log: s.Log},
		Relay:      relay,
		Metrics:    m,
		Orders:     orders,
		Refunds:    refunds,
		Accounts:   account.New(s.Store, s.Clock),
		Catalog:    catalog.New(s.Store, s.Redis, s.Clock),
		Statements: statements,
		Reconciler: &reconcile.Reconciler{
			Store: s.Store, Orders: orders, Refunds: refunds, Groups: groups, Sweeper: sweeper, Stock: stock.NewCounter(s.Redis),
			Clock: s.Clock, Log: s.Log, Grace: c.ReconcileGrace.D(),
		},
	}
}
