package chaos

import (
	"os"
	"regexp"
	"strconv"
	"strings"
)

// What the cluster's logs tell after a run: panics, and how often each
// recovery path (takeover, sweep, requeue) ran.

// panics scans every orderflow log for panics and data races.
func (c *cluster) panics() []string {
	var out []string
	for _, p := range c.services() {
		b, err := os.ReadFile(p.log)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "panic:") || strings.HasPrefix(line, "fatal error:") || strings.Contains(line, "WARNING: DATA RACE") {
				out = append(out, p.name+": "+line)
			}
		}
	}
	return out
}

// recoveryMarkers are log messages that show a repair path ran.
var recoveryMarkers = []struct{ label, msg string }{
	{"stuck claims reset", "stuck claim reset to paid and re-queued"},
	{"lost workers taken over", "fleet: worker lost; its claims released"},
	{"lost workers' claims released", "lost worker's claim released and re-queued"},
	{"lost workers' tasks put back", "fleet: tasks of a lost worker put back"},
	{"claims taken over", "took over own claim after lease expiry"},
	{"claims lost before finalize", "claim lost before finalize"},
	{"paid orders re-queued", "paid order had no live task; re-queued"},
	{"refunds re-queued", "processing refund had no live task; re-queued"},
	{"settlements kept in Redis (ledger down)", "ledger is unreachable; kept in the pending set"},
	{"exhausted settlements flushed", "exhausted settlement written to the ledger"},
	{"epoch-triggered reconciliations", "Redis epoch marker was missing"},
	{"missed periodic slots run at start", "periodic slot was missed"},
	{"outbox rows drained by the poller", "outbox drained by poller"},
	{"refunds to manual", "refund moved to manual"},
	{"lost notifications found by query", "payment found by query: its notification was lost"},
	{"orders failed", `"order failed"`},
	{"short counters repaired at create", "stock counter was below the ledger; repaired from it"},
	{"counters reset by the sweep", "stock counter was off the ledger; reset from it"},
	{"close restores run again", "stock counter restore failed; the close task runs again"},
}

// sweptRE reads how many objects a sweep pass re-queued from its log line.
var sweptRE = regexp.MustCompile(`"sweep pass".*?"requeued":\s*(\d+)`)

// recoveries counts, over every orderflow log, how often each repair path ran.
func (c *cluster) recoveries() map[string]int {
	out := map[string]int{}
	for _, p := range c.services() {
		b, err := os.ReadFile(p.log)
		if err != nil {
			continue
		}
		text := string(b)
		for _, m := range recoveryMarkers {
			if n := strings.Count(text, m.msg); n > 0 {
				out[m.label] += n
			}
		}
		for _, m := range sweptRE.FindAllStringSubmatch(text, -1) {
			if n, _ := strconv.Atoi(m[1]); n > 0 {
				out["objects re-queued by the sweep"] += n
			}
		}
	}
	return out
}
