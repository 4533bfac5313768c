package svc

import (
	"context"
	"fmt"
	"os"

	"orderflow/internal/infra/tracing"
	"orderflow/model"

	"go.uber.org/zap"
)

// Boot loads the configuration for a binary (etc/<name>.yaml, or the file
// named by ORDERFLOW_CONFIG), builds the logger and connects everything. A
// bad setting comes back as one error line naming it.
func Boot(name string) (*ServiceContext, error) {
	cfg, warnings, err := Load(configPath(name), os.Environ())
	if err != nil {
		return nil, err
	}
	log, err := NewLogger(cfg)
	if err != nil {
		return nil, err
	}
	log = log.With(zap.String("process", name))
	for _, w := range warnings {
		log.Warn(w)
	}
	// Before the connections: the API's router and the HTTP clients look
	// at whether tracing is on when they are built.
	stop, err := tracing.Setup(context.Background(), "orderflow-"+name)
	if err != nil {
		return nil, err
	}
	sc, err := New(cfg, log)
	if err != nil {
		_ = stop(context.Background())
		return nil, fmt.Errorf("connect: %w", err)
	}
	sc.stopTracing = stop
	return sc, nil
}

func configPath(name string) string {
	if p := os.Getenv("ORDERFLOW_CONFIG"); p != "" {
		return p
	}
	return "etc/" + name + ".yaml"
}

// EnsureDatabase creates the configured database if it is missing.
func EnsureDatabase(name string) error {
	cfg, _, err := Load(configPath(name), os.Environ())
	if err != nil {
		return err
	}
	if cfg.SQLitePath != "" {
		return nil // opening the file creates it
	}
	return model.EnsureDatabase(cfg.MySQLDSN)
}
