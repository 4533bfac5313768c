package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// The shared Redis's DB numbers 1..15 are handed out by a reservation key in
// DB 0 (internal/testenv does the same), so the bench and the test suites
// running beside it never flush each other's data.
const reservationTTL = 15 * time.Minute

// redisReservation holds one DB number for the run.
type redisReservation struct {
	ctl   *redis.Client
	key   string
	owner string
	db    int
}

// reserveRedisDB takes the preferred DB number if free, else the first free
// one, and flushes it.
func reserveRedisDB(ctx context.Context, addr string, preferred int) (*redisReservation, error) {
	ctl := redis.NewClient(&redis.Options{Addr: addr})
	owner := "bench-" + randHex(6)
	order := []int{preferred}
	for n := 15; n >= 1; n-- {
		if n != preferred {
			order = append(order, n)
		}
	}
	for _, n := range order {
		key := "orderflow:testdb:" + strconv.Itoa(n)
		ok, err := ctl.SetNX(ctx, key, owner, reservationTTL).Result()
		if err != nil {
			ctl.Close()
			return nil, fmt.Errorf("reserve a Redis DB at %s: %w", addr, err)
		}
		if !ok {
			continue
		}
		c := redis.NewClient(&redis.Options{Addr: addr, DB: n})
		err = c.FlushDB(ctx).Err()
		c.Close()
		if err != nil {
			ctl.Close()
			return nil, fmt.Errorf("flush Redis DB %d: %w", n, err)
		}
		return &redisReservation{ctl: ctl, key: key, owner: owner, db: n}, nil
	}
	ctl.Close()
	return nil, fmt.Errorf("no free Redis DB number on %s (all 1..15 reserved)", addr)
}

// release flushes the DB (asynq's scheduled closes would otherwise linger)
// and gives the number back if it is still ours.
func (r *redisReservation) release(ctx context.Context, addr string) {
	if v, _ := r.ctl.Get(ctx, r.key).Result(); v == r.owner {
		c := redis.NewClient(&redis.Options{Addr: addr, DB: r.db})
		_ = c.FlushDB(ctx).Err()
		c.Close()
		r.ctl.Del(ctx, r.key)
	}
	r.ctl.Close()
}
