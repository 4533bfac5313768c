package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelMaster is the master name the sentinels monitor.
const SentinelMaster = "orderflow"

// Sentinels is a private Redis master, one replica and three sentinels, none
// persistent: a killed server comes back empty and the sentinels make it a
// replica of whoever is master then.
type Sentinels struct {
	redis     []*redisServer // [0] starts as master, [1] as its replica
	sentinels []*proc
	ports     []int
	out       Printer
}

// StartSentinels starts the group under dir and waits until every sentinel
// knows the master and its replica.
func StartSentinels(ctx context.Context, dir, logdir string, out Printer) (*Sentinels, error) {
	bin, err := findBinary("redis-server")
	if err != nil {
		return nil, err
	}
	taken := map[int]bool{}
	s := &Sentinels{out: out}
	for i := range 2 {
		p, err := sparePort(taken)
		if err != nil {
			return nil, err
		}
		d := filepath.Join(dir, fmt.Sprintf("redis-%d", i+1))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
		r, err := newRedis(d, logdir, p)
		if err != nil {
			return nil, err
		}
		r.proc.name = fmt.Sprintf("redis-%d", i+1)
		r.proc.log = filepath.Join(logdir, r.proc.name+".log")
		if i == 1 {
			r.proc.args = append(r.proc.args, "--replicaof", "127.0.0.1", strconv.Itoa(s.redis[0].port))
		}
		s.redis = append(s.redis, r)
	}
	for _, r := range s.redis {
		if err := r.proc.Start(); err != nil {
			return s, err
		}
		if err := r.WaitReady(ctx, 10*time.Second); err != nil {
			return s, err
		}
	}
	for i := range 3 {
		p, err := sparePort(taken)
		if err != nil {
			return s, err
		}
		// A sentinel rewrites its file, so each gets its own.
		conf := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", i+1))
		m := SentinelMaster
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\nprotected-mode no\ndir %s\n", p, dir) +
			fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 2\n", m, s.redis[0].port) +
			fmt.Sprintf("sentinel down-after-milliseconds %s 1000\n", m) +
			fmt.Sprintf("sentinel failover-timeout %s 4000\n", m) +
			fmt.Sprintf("sentinel parallel-syncs %s 1\n", m)
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			return s, err
		}
		name := fmt.Sprintf("sentinel-%d", i+1)
		pr := newProc(name, bin, []string{conf, "--sentinel"}, os.Environ(), filepath.Join(logdir, name+".log"))
		if err := pr.Start(); err != nil {
			return s, err
		}
		s.sentinels, s.ports = append(s.sentinels, pr), append(s.ports, p)
	}
	// Ready when every sentinel sees one replica of the master.
	for _, a := range s.Addrs() {
		c := redis.NewSentinelClient(&redis.Options{Addr: a, DialTimeout: 300 * time.Millisecond})
		err := pollReady(ctx, 20*time.Second, 100*time.Millisecond, "sentinel "+a, func(ctx context.Context) error {
			reps, err := c.Replicas(ctx, SentinelMaster).Result()
			if err != nil {
				return err
			}
			if len(reps) == 0 {
				return fmt.Errorf("no replica known yet")
			}
			return nil
		})
		c.Close()
		if err != nil {
			return s, err
		}
	}
	out.Printf("redis master :%d, replica :%d, sentinels %v", s.redis[0].port, s.redis[1].port, s.ports)
	return s, nil
}

// Addrs are the sentinels' addresses.
func (s *Sentinels) Addrs() []string {
	var out []string
	for _, p := range s.ports {
		out = append(out, "127.0.0.1:"+strconv.Itoa(p))
	}
	return out
}

// Client is a sentinel-aware client of the current master.
func (s *Sentinels) Client() *redis.Client {
	return redis.NewFailoverClient(&redis.FailoverOptions{MasterName: SentinelMaster, SentinelAddrs: s.Addrs(),
		DialTimeout: 500 * time.Millisecond})
}

// Master is the index of the server the sentinels name master (-1 if none
// answers).
func (s *Sentinels) Master(ctx context.Context) int {
	for _, a := range s.Addrs() {
		c := redis.NewSentinelClient(&redis.Options{Addr: a, DialTimeout: 300 * time.Millisecond})
		addr, err := c.GetMasterAddrByName(ctx, SentinelMaster).Result()
		c.Close()
		if err != nil || len(addr) != 2 {
			continue
		}
		for i, r := range s.redis {
			if strconv.Itoa(r.port) == addr[1] {
				return i
			}
		}
	}
	return -1
}

// Failover is what one lossy failover did.
type Failover struct {
	From, To int
	// LostBytes is how far the master's replication offset was ahead of the
	// replica's when the master was killed: writes the new master never saw.
	LostBytes int64
	// Took runs from the kill until the sentinels named the new master.
	Took time.Duration
}

// LossyFailover forces a failover that loses writes: the replica is frozen
// (SIGSTOP) for lag while the master keeps taking writes, then the master
// is killed and the replica thawed, so the sentinels promote a replica that
// never received them. The old master is started again (empty) and the
// sentinels make it the new replica.
func (s *Sentinels) LossyFailover(ctx context.Context, lag time.Duration) (Failover, error) {
	m := s.Master(ctx)
	if m < 0 {
		return Failover{}, fmt.Errorf("no master known to the sentinels")
	}
	r := 1 - m
	f := Failover{From: m, To: r}
	s.redis[r].proc.Freeze()
	sleep(ctx, lag)
	mc := redis.NewClient(&redis.Options{Addr: s.redis[m].Addr(), DialTimeout: 300 * time.Millisecond})
	info, _ := mc.Info(ctx, "replication").Result()
	mc.Close()
	f.LostBytes = lagBytes(info)
	s.redis[m].proc.Kill9()
	killed := time.Now()
	s.redis[r].proc.Thaw()
	err := pollReady(ctx, 30*time.Second, 50*time.Millisecond, "sentinel failover", func(ctx context.Context) error {
		if got := s.Master(ctx); got != r {
			return fmt.Errorf("master is still %d", got)
		}
		return nil
	})
	f.Took = time.Since(killed)
	if err != nil {
		return f, err
	}
	// Started with its first arguments (master, or replica of the old
	// master): the sentinels re-point it either way.
	s.redis[m].proc.Want()
	if err := s.redis[m].proc.Start(); err != nil {
		return f, err
	}
	return f, s.redis[m].WaitReady(ctx, 10*time.Second)
}

// lagBytes reads master_repl_offset minus the first replica's acknowledged
// offset from INFO replication.
func lagBytes(info string) int64 {
	var master, replica int64
	for _, l := range strings.Split(info, "\n") {
		l = strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(l, "master_repl_offset:"); ok {
			master, _ = strconv.ParseInt(v, 10, 64)
		}
		if v, ok := strings.CutPrefix(l, "slave0:"); ok {
			for _, kv := range strings.Split(v, ",") {
				if o, ok := strings.CutPrefix(kv, "offset="); ok {
					replica, _ = strconv.ParseInt(o, 10, 64)
				}
			}
		}
	}
	return master - replica
}

// procs are every server's and sentinel's process.
func (s *Sentinels) procs() []*proc {
	var out []*proc
	for _, r := range s.redis {
		out = append(out, r.proc)
	}
	return append(out, s.sentinels...)
}

// Stop kills every process of the group.
func (s *Sentinels) Stop() {
	for _, p := range s.procs() {
		p.Kill9()
	}
}
