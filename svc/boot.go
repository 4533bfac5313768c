package svc

import (
	"fmt"
	"os"

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
	sc, err := New(cfg, log)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
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
