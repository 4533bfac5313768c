package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MachineCPU is how busy the whole box was over a window, in percent of
// all its CPUs: busy is every process's work (user, nice, system, irq,
// softirq), steal what the hypervisor gave to other guests — time this
// box's processes wanted and did not get — and iowait idle time while a
// disk read or write was outstanding (a commit's fsync, a page read). A
// phase that ran beside a lot of steal measured a smaller machine; one with
// a lot of iowait and little busy measured a slow disk, not the code.
type MachineCPU struct {
	BusyPct   float64 `json:"busy_pct"`
	StealPct  float64 `json:"steal_pct"`
	IOWaitPct float64 `json:"iowait_pct"`
}

func (m *MachineCPU) String() string {
	if m == nil {
		return "box CPU n/a"
	}
	return fmt.Sprintf("box CPU busy %.0f %%, steal %.0f %%, iowait %.0f %%", m.BusyPct, m.StealPct, m.IOWaitPct)
}

// cpuTicks is the first line of /proc/stat: the box's CPU time by kind.
type cpuTicks struct{ busy, idle, iowait, steal float64 }

func readCPUTicks() (cpuTicks, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTicks{}, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTicks{}, false
	}
	v := make([]float64, 8) // user nice system idle iowait irq softirq steal
	for i := range v {
		if v[i], err = strconv.ParseFloat(f[i+1], 64); err != nil {
			return cpuTicks{}, false
		}
	}
	return cpuTicks{busy: v[0] + v[1] + v[2] + v[5] + v[6], idle: v[3], iowait: v[4], steal: v[7]}, true
}

// machineWindow starts a window; its end returns the box's CPU over it
// (nil where /proc/stat cannot be read).
func machineWindow() (end func() *MachineCPU) {
	t0, ok0 := readCPUTicks()
	return func() *MachineCPU {
		t1, ok1 := readCPUTicks()
		busy, idle, iowait, steal := t1.busy-t0.busy, t1.idle-t0.idle, t1.iowait-t0.iowait, t1.steal-t0.steal
		total := busy + idle + iowait + steal
		if !ok0 || !ok1 || total <= 0 {
			return nil
		}
		pct := func(v float64) float64 { return round1(100 * v / total) }
		return &MachineCPU{BusyPct: pct(busy), StealPct: pct(steal), IOWaitPct: pct(iowait)}
	}
}
