package svc

import (
	"strings"

	"github.com/redis/go-redis/v9"
)

// NewRedis returns one client for standalone, Sentinel or Cluster Redis; our
// own keys and asynq's broker share it.
func NewRedis(c Config) redis.UniversalClient {
	addrs := strings.Split(c.RedisAddr, ",")
	switch c.RedisMode {
	case "cluster":
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Password: c.RedisPassword})
	case "sentinel":
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: c.RedisMaster, SentinelAddrs: addrs, Password: c.RedisPassword, DB: c.RedisDB,
		})
	default:
		return redis.NewClient(&redis.Options{Addr: addrs[0], Password: c.RedisPassword, DB: c.RedisDB})
	}
}
