package chaos

import (
	"io"
	"time"
)

// Config tunes a run.
type Config struct {
	// Seed draws the fault schedule and the workload; the same seed gives the
	// same schedule (the interleavings are the machine's).
	Seed int64
	// Short is the fast-tier run: under two minutes, every fault kind once.
	Short bool
	// Duration is how long the workload runs (0: 150 s, or 40 s when Short).
	Duration time.Duration
	// Workers is the number of queue processes (0: 3, or 2 when Short).
	Workers int
	// Clients is the number of concurrent workload clients (0: 8, or 6 when Short).
	Clients int
	// BinDir holds prebuilt Binaries; empty builds them.
	BinDir string
	// WorkDir keeps logs (empty: a temporary directory, removed after a
	// passing run unless Keep).
	WorkDir string
	// Keep leaves the logs and the MariaDB data directory in place.
	Keep bool
	// HA runs on a 3-node Galera cluster and a Redis Sentinel group, with
	// their own faults (ha.go) instead of the single servers' ones.
	HA bool
	// Provider is how buyers pay: ProviderPaysim (the default: the
	// simulator only) or ProviderAlipay (checkout at the Alipay fake, its
	// signed notifications, some lost; further trades by the simulator).
	Provider string
	// Out receives progress lines (nil: discarded).
	Out io.Writer
}

func (c *Config) defaults() {
	if c.Duration == 0 {
		c.Duration = 150 * time.Second
		if c.HA {
			c.Duration = 100 * time.Second
		}
		if c.Short {
			c.Duration = 40 * time.Second
		}
	}
	if c.Workers == 0 {
		c.Workers = 3
		if c.Short {
			c.Workers = 2
		}
	}
	if c.Clients == 0 {
		c.Clients = 8
		if c.Short {
			c.Clients = 6
		}
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
	if c.Provider == "" {
		c.Provider = ProviderPaysim
	}
}
