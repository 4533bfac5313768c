package svc

import (
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// NewRedis returns one client for standalone, Sentinel or Cluster Redis; our
// own keys and asynq's broker share it.
func NewRedis(c Config) redis.UniversalClient {
	addrs := strings.Split(c.RedisAddr, ",")
	// Fail fast when Redis is down: it is a scheduler and a cache, and every
	// caller has a ledger-backed way to carry on (the outbox poller, TTLs,
	// rebuilds). go-redis's defaults would retry a refused dial for seconds.
	const (
		dialTimeout = 500 * time.Millisecond
		maxRetries  = 1
	)
	switch c.RedisMode {
	case "cluster":
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Password: c.RedisPassword,
			DialTimeout: dialTimeout, MaxRetries: maxRetries, DialerRetries: 1})
	case "sentinel":
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: c.RedisMaster, SentinelAddrs: addrs, Password: c.RedisPassword, DB: c.RedisDB,
			DialTimeout: dialTimeout, MaxRetries: maxRetries, DialerRetries: 1,
		})
	default:
		return redis.NewClient(&redis.Options{Addr: addrs[0], Password: c.RedisPassword, DB: c.RedisDB,
			DialTimeout: dialTimeout, MaxRetries: maxRetries, DialerRetries: 1})
	}
}
