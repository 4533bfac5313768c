package main

import (
	"math"
	"slices"
	"time"
)

// Quantiles of a latency sample, in milliseconds.
type Quantiles struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

// percentiles uses the nearest-rank method on a copy of the sample.
func percentiles(sample []time.Duration) Quantiles {
	if len(sample) == 0 {
		return Quantiles{}
	}
	s := slices.Clone(sample)
	slices.Sort(s)
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		return msOf(s[min(max(i, 0), len(s)-1)])
	}
	return Quantiles{N: len(s), P50: at(0.50), P95: at(0.95), P99: at(0.99), Max: msOf(s[len(s)-1])}
}

func msOf(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }

func round1(f float64) float64 { return math.Round(f*10) / 10 }

func round2(f float64) float64 { return math.Round(f*100) / 100 }

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }
