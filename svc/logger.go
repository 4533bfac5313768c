package svc

import (
	"fmt"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// NewLogger builds the zap logger: JSON for production, console for development.
func NewLogger(c Config) (*zap.Logger, error) {
	level, err := zapcore.ParseLevel(c.LogLevel)
	if err != nil {
		return nil, fmt.Errorf("setting ORDERFLOW_LOG_LEVEL: %w", err)
	}
	zc := zap.NewProductionConfig()
	if c.LogFormat == "console" {
		zc = zap.NewDevelopmentConfig()
	}
	zc.Level = zap.NewAtomicLevelAt(level)
	zc.EncoderConfig.TimeKey = "ts"
	zc.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
	zc.Sampling = nil
	// Errors carry their operation and object numbers; stack traces only add noise.
	zc.DisableStacktrace = true
	return zc.Build()
}
