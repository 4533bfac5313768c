package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// printDistance writes the distance phase beside the same run's loopback
// figures: one row at 0 ms (phases 1 and 2, the census), one at the
// configured round trip, then what stands behind the second.
func (r *Report) printDistance(w io.Writer) {
	d := r.Distance
	if d == nil {
		return
	}
	rtt := msText(r.Params.RTT.D())
	fmt.Fprintf(w, "\ndistance: MariaDB and Redis %s RTT away (delay: %s)\n", rtt, d.Delay)
	probe := func(when string, p DelayProbe, hop bool) {
		if p.Rounds == 0 {
			return
		}
		times := func(name string, t ProbeTimes) string {
			if hop {
				return fmt.Sprintf("%s direct %.3f ms, through the proxy with no delay %.3f ms, delayed %.3f ms (added %.3f ms, p99 %.2f ms)",
					name, t.DirectMs, t.HopMs, t.DelayedMs, t.AddedMs, t.DelayedP99Ms)
			}
			return fmt.Sprintf("%s direct %.3f ms, delayed %.3f ms (added %.3f ms, p99 %.2f ms)", name, t.DirectMs, t.DelayedMs, t.AddedMs, t.DelayedP99Ms)
		}
		fmt.Fprintf(w, "  round trip measured %s, mean of %d: %s; %s\n", when, p.Rounds, times("SELECT 1", p.SQL), times("Redis PING", p.Redis))
	}
	probe("idle", d.Probe, true)
	if d.Loaded != nil {
		probe("under the closed loop", *d.Loaded, true)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RTT\tfloor orders/s\tend to end orders/s\te2e ÷ floor\tpaid→finished p50 / p99\tSQL round trips / order\tRedis round trips / order\tactivation batches")
	var near []string
	if r.FloorBest != nil || r.E2E != nil {
		floor := "n/a"
		if f := r.FloorBest; f != nil {
			v := f.OrdersPerS
			if r.FloorForRatio > 0 {
				v = r.FloorForRatio
			}
			floor = fmt.Sprintf("%.0f (%d conns)", v, f.Conns)
		}
		sqlRT, redisRT := fmt.Sprintf("floor %d", floorRoundTrips), "floor 0"
		if c := r.Census; c != nil {
			sqlRT += fmt.Sprintf(", api %.2f, workers %.2f", c.API.SQLRoundTrips, c.Workers.SQLRoundTrips)
			redisRT += fmt.Sprintf(", api %.2f, workers %.2f", c.API.RedisRoundTrips, c.Workers.RedisRoundTrips)
			near = append(near, fmt.Sprintf("product round trips from the census (%d orders, 8 clients, end of the run)", c.Orders))
		}
		row := []string{"0 (loopback)", floor, "n/a", ratioText(r.Ratio), "n/a", sqlRT, redisRT, "n/a"}
		if e := r.E2E; e != nil && e.Closed != nil {
			row[2], row[4], row[7] = fmt.Sprintf("%.0f", e.Closed.OrdersPerS), p50p99(e.Closed.PaidToFinished), e.Closed.Batches.String()
		}
		if r.FloorAfter != nil {
			near = append(near, "floor the mean of before and after phase 2")
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	far := []string{rtt, "n/a", "n/a", ratioText(d.Ratio), "n/a",
		fmt.Sprintf("api %.2f, workers %.2f", d.API.SQL, d.Workers.SQL), fmt.Sprintf("api %.2f, workers %.2f", d.API.Redis, d.Workers.Redis), "n/a"}
	if f := d.FloorBest; f != nil {
		far[1] = fmt.Sprintf("%.0f (%d conns)", f.OrdersPerS, f.Conns)
		far[5] = fmt.Sprintf("floor %.2f, ", f.SQLRoundTrips) + far[5]
		far[6] = "floor 0, " + far[6]
	}
	if c := d.Closed; c != nil {
		far[2], far[4], far[7] = fmt.Sprintf("%.0f", c.OrdersPerS), p50p99(c.PaidToFinished), c.Batches.String()
	}
	fmt.Fprintln(tw, strings.Join(far, "\t"))
	tw.Flush()
	if len(near) > 0 {
		fmt.Fprintf(w, "  at 0 ms: %s\n", strings.Join(near, "; "))
	}
	if len(d.Floor) > 0 {
		var pts []string
		for _, f := range d.Floor {
			pts = append(pts, fmt.Sprintf("%d connections %.0f orders/s, p50 %.1f ms, p99 %.1f ms", f.Conns, f.OrdersPerS, f.P50Ms, f.P99Ms))
		}
		fmt.Fprintf(w, "  at %s, floor: %s\n", rtt, strings.Join(pts, "; "))
	}
	if c := d.Closed; c != nil {
		fmt.Fprintf(w, "  at %s, end to end: %d orders, %d client errors; create / pay request p50 %.1f / %.1f ms (p99 %.0f / %.0f); paid→claimed p50 %.1f ms, claimed→finished p50 %.1f ms; %s\n",
			rtt, c.Orders, c.ClientErrors, c.Create.P50, c.Pay.P50, c.Create.P99, c.Pay.P99, c.PaidToClaimed.P50, c.ClaimedToFinished.P50, c.Machine)
	}
	if len(d.Resources) > 0 {
		var parts []string
		for _, res := range d.Resources {
			name := res.Process
			if name == "bench" {
				name = "bench (load and proxies)"
			}
			parts = append(parts, fmt.Sprintf("%s %.2f", name, res.CPUPer1k))
		}
		fmt.Fprintf(w, "  at %s, CPU s per 1k orders: %s\n", rtt, strings.Join(parts, ", "))
	}
}

func p50p99(q Quantiles) string { return fmt.Sprintf("%.1f / %.1f ms", q.P50, q.P99) }

func ratioText(r float64) string {
	if r <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", r)
}
