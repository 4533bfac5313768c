package testenv

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisCluster is a private Redis Cluster of masters (no replicas) on spare
// ports, made with redis-server in cluster mode and `redis-cli --cluster
// create`. It is killed when the test ends.
type RedisCluster struct {
	// Addrs are the masters' host:port, the seed list for a cluster client.
	Addrs []string
}

// StartRedisCluster starts n (≥3) empty, non-persistent cluster-mode
// redis-servers, joins them into one cluster with every slot assigned, and
// waits until each node reports cluster_state:ok.
func StartRedisCluster(t testing.TB, n int) *RedisCluster {
	t.Helper()
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		cli = "/usr/bin/redis-cli"
	}
	dir := t.TempDir()
	rc := &RedisCluster{}
	for range n {
		port := clusterPort(t)
		startRedis(t, port, "--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, fmt.Sprintf("nodes-%d.conf", port)),
			"--cluster-node-timeout", "5000", "--dir", dir)
		rc.Addrs = append(rc.Addrs, "127.0.0.1:"+strconv.Itoa(port))
	}
	args := append([]string{"--cluster", "create"}, rc.Addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("testenv: redis-cli --cluster create: %v\n%s", err, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, a := range rc.Addrs {
		for {
			info, err := clusterInfo(a)
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_slots_ok:16384") &&
				strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(n)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("testenv: cluster node %s not ok after 30s: %v\n%s", a, err, info)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return rc
}

// SeedList is Addrs comma-separated, as ORDERFLOW_REDIS_ADDR takes it.
func (rc *RedisCluster) SeedList() string { return strings.Join(rc.Addrs, ",") }

func clusterInfo(addr string) (string, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 500 * time.Millisecond, MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return c.ClusterInfo(ctx).Result()
}

// clusterPort is a spare port whose cluster-bus port (+10000) is free too.
func clusterPort(t testing.TB) int {
	t.Helper()
	for range 100 {
		p := sparePort(t)
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		if err != nil {
			continue
		}
		ln.Close()
		return p
	}
	t.Fatal("testenv: no spare port pair for a cluster node")
	return 0
}
