package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// batchMetric is the worker's histogram of activation batch sizes: one
// observation per batch, its number of orders (buckets 1, 2, 4, … 64).
const batchMetric = "orderflow_activation_batch_size"

// BatchSizes is how the workers batched their activations over one load
// phase, from the difference of their /metrics before and after it.
type BatchSizes struct {
	Batches int64   `json:"batches"`
	Orders  int64   `json:"orders"`
	Mean    float64 `json:"mean"`
	// InBatchesOf2Plus is the share of orders activated in a batch of two or more.
	InBatchesOf2Plus float64 `json:"share_in_batches_of_2_plus"`
}

// batchCounts is one scrape of the histogram, summed over the workers:
// observations, their sum, and the observations of size 1 (bucket le="1").
type batchCounts struct {
	ok                 bool
	count, sum, single float64
}

// scrapeBatches reads every worker's /metrics; ok is false when a worker
// does not export the histogram (yet).
func scrapeBatches(ctx context.Context, e *benchEnv, s *stack) batchCounts {
	out := batchCounts{ok: len(s.workers) > 0}
	for _, w := range s.workers {
		c, err := scrapeBatch(ctx, e, "http://"+w.addr+"/metrics")
		if err != nil || !c.ok {
			return batchCounts{}
		}
		out.count, out.sum, out.single = out.count+c.count, out.sum+c.sum, out.single+c.single
	}
	return out
}

func scrapeBatch(ctx context.Context, e *benchEnv, url string) (batchCounts, error) {
	var c batchCounts
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return c, err
	}
	req.Header.Set("Authorization", "Bearer "+e.adminToken) // needed when ORDERFLOW_METRICS_AUTH=admin
	resp, err := e.hc.Do(req)
	if err != nil {
		return c, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return c, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(name, batchMetric) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		switch {
		case name == batchMetric+"_count":
			c.count, c.ok = v, true
		case name == batchMetric+"_sum":
			c.sum = v
		case strings.HasPrefix(name, batchMetric+"_bucket{") && strings.Contains(name, `le="1"`):
			c.single = v
		}
	}
	return c, sc.Err()
}

// batchSizes is the difference of two scrapes, or nil when either has no
// histogram or no batch ran in between.
func batchSizes(a, b batchCounts) *BatchSizes {
	if !a.ok || !b.ok || b.count <= a.count {
		return nil
	}
	n, orders, single := b.count-a.count, b.sum-a.sum, b.single-a.single
	res := &BatchSizes{Batches: int64(n), Orders: int64(orders), Mean: round2(orders / n)}
	if orders > 0 {
		res.InBatchesOf2Plus = round2((orders - single) / orders)
	}
	return res
}

// String is the report's cell: "n/a" while the workers export no histogram.
func (b *BatchSizes) String() string {
	if b == nil {
		return "n/a"
	}
	return fmt.Sprintf("mean %.2f, %.0f %% of orders in batches ≥ 2 (%d batches, %d orders)", b.Mean, 100*b.InBatchesOf2Plus, b.Batches, b.Orders)
}
