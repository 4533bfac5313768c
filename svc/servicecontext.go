package svc

import (
	"context"
	"errors"
	"time"

	"orderflow/internal/domain/fleet"
	"orderflow/internal/infra/clock"
	"orderflow/internal/infra/pay"
	"orderflow/internal/infra/tasks"
	"orderflow/model"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"gorm.io/gorm"
)

// ServiceContext is what the API and the queue worker share.
type ServiceContext struct {
	Config    Config
	Log       *zap.Logger
	Clock     clock.Clock
	DB        *gorm.DB
	Store     *model.Store
	Redis     redis.UniversalClient
	Asynq     *asynq.Client
	Inspector *asynq.Inspector
	Tasks     tasks.Table
	// Pay is the enabled payment providers (ORDERFLOW_PAY_PROVIDERS).
	Pay *pay.Registry
	// WorkerID names this process on the claims it makes and on its lease
	// in the fleet's registry (fleet.NewWorkerID).
	WorkerID string

	stopWatch context.CancelFunc // ends watchFailovers (sentinel mode)

	// stopTracing flushes and stops the trace provider Boot installed.
	stopTracing func(context.Context) error
}

// New connects every dependency. The caller closes it with Close.
func New(c Config, log *zap.Logger) (*ServiceContext, error) {
	reg, err := NewPayRegistry(c)
	if err != nil {
		return nil, err
	}
	db, err := NewDB(c)
	if err != nil {
		return nil, err
	}
	rdb := NewRedis(c)
	stop := context.CancelFunc(func() {})
	if c.RedisMode == "sentinel" {
		var ctx context.Context
		ctx, stop = context.WithCancel(context.Background())
		watchFailovers(ctx, c, rdb, log)
	}
	return &ServiceContext{
		Config:    c,
		Log:       log,
		Clock:     clock.Real{},
		WorkerID:  fleet.NewWorkerID(),
		DB:        db,
		Store:     NewStore(db),
		Redis:     rdb,
		Asynq:     asynq.NewClientFromRedisClient(rdb),
		Inspector: asynq.NewInspectorFromRedisClient(rdb),
		Tasks:     tasks.NewTable(c.TaskConfig()),
		Pay:       reg,
		stopWatch: stop,
	}, nil
}

// TaskConfig is the configured part of the task-type table.
func (c Config) TaskConfig() tasks.Config {
	return tasks.Config{
		ActivateTimeout:     c.ActivateDeadline(),
		ActivateRetryDelay:  c.ActivateRetryDelay.D(),
		SweepInterval:       c.SweepInterval.D(),
		RefundRetryDelays:   c.RefundDelays(),
		SettleRetryDelays:   c.SettleDelays(),
		PayTimeout:          c.PayTimeout.D(),
		NotifyInterval:      c.NotifyInterval.D(),
		WebhookRetryDelay:   c.WebhookRetryDelay.D(),
		StatementRetryDelay: c.StatementRetryDelay.D(),
	}
}

// Close releases every connection.
func (s *ServiceContext) Close() error {
	if s.stopWatch != nil {
		s.stopWatch()
	}
	var errs []error
	if s.stopTracing != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		errs = append(errs, s.stopTracing(ctx))
		cancel()
	}
	if sqlDB, err := s.DB.DB(); err == nil {
		errs = append(errs, sqlDB.Close())
	}
	// The asynq client and inspector were built from our Redis client and do
	// not own it; closing the client closes their connections.
	errs = append(errs, s.Redis.Close())
	return errors.Join(errs...)
}
