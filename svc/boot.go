package svc

import (
	"fmt"
	"os"

	"go.uber.org/zap"
)

// Boot loads the configuration for a binary (etc/<name>.yaml, or the file
// named by ORDERFLOW_CONFIG), builds the logger and connects everything. A
// bad setting comes back as one error line naming it.
func Boot(name string) (*ServiceContext, error) {
	path := os.Getenv("ORDERFLOW_CONFIG")
	if path == "" {
		path = "etc/" + name + ".yaml"
	}
	cfg, warnings, err := Load(path, os.Environ())
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
