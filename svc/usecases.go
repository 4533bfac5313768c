package svc

import (
	"orderflow/account"
	"orderflow/catalog"
	"orderflow/order"
	"orderflow/outbox"
)

// UseCases are the aggregates' services both binaries call.
type UseCases struct {
	Relay    *outbox.Relay
	Orders   *order.Service
	Accounts *account.Service
	Catalog  *catalog.Service
}

// NewUseCases builds every use-case service on the context's dependencies.
// Tests that swap the clock do so on the ServiceContext before calling it.
func (s *ServiceContext) NewUseCases() *UseCases {
	c := s.Config
	relay := outbox.New(s.Store, s.Asynq, s.Tasks, s.Log)
	return &UseCases{
		Relay: relay,
		Orders: order.New(order.Deps{
			Store: s.Store, Redis: s.Redis, Relay: relay, Inspector: s.Inspector,
			Tasks: s.Tasks, Clock: s.Clock, Log: s.Log,
		}, order.Settings{
			OrderTTL: c.OrderTTL.D(), ClaimTimeout: c.ClaimTimeout.D(), MaxPending: c.MaxPending,
			MaxAttempts: c.MaxAttempts, CacheTTL: c.CacheTTL.D(), IdempotencyTTL: c.IdempotencyTTL.D(),
		}),
		Accounts: account.New(s.Store, s.Clock),
		Catalog:  catalog.New(s.Store, s.Redis, s.Clock),
	}
}
