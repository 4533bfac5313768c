// Package health serves /healthz (the process is alive) and /readyz (the
// ledger and Redis answer and the schema is current) for both binaries.
package health

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"orderflow/model"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"
)

// Checker probes the dependencies.
type Checker struct {
	DB    *gorm.DB
	Redis redis.UniversalClient
}

// Live answers 200 while the process runs.
func (c *Checker) Live(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"status":"ok"}`))
}

// Ready answers 200 when the database and Redis are reachable and every
// migration is applied, 503 naming what is not.
func (c *Checker) Ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	checks := map[string]string{"database": "ok", "redis": "ok", "migrations": "ok"}
	ok := true
	if sqlDB, err := c.DB.DB(); err != nil || sqlDB.PingContext(ctx) != nil {
		checks["database"], checks["migrations"], ok = "unreachable", "unknown", false
	} else if current, err := model.MigrationsCurrent(ctx, c.DB); err != nil || !current {
		checks["migrations"], ok = "pending", false
	}
	if err := c.Redis.Ping(ctx).Err(); err != nil {
		checks["redis"], ok = "unreachable", false
	}
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(checks)
}
