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
// box's processes wanted and did not get. A phase that ran beside a lot
// of steal measured a smaller machine.
type MachineCPU struct {
	BusyPct  float64 `json:"busy_pct"`
	StealPct float64 `json:"steal_pct"`
}

func (m *MachineCPU) String() string {
	if m == nil {
		return "box CPU n/a"
	}
	return fmt.Sprintf("box CPU busy %.0f %%, steal %.0f %%", m.BusyPct, m.StealPct)
}

// cpuTicks is the first line of /proc/stat: the box's CPU time by kind.
type cpuTicks struct{ busy, idle, steal float64 }

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
	return cpuTicks{busy: v[0] + v[1] + v[2] + v[5] + v[6], idle: v[3] + v[4], steal: v[7]}, true
}

// machineWindow starts a window; its end returns the box's CPU over it
// (nil where /proc/stat cannot be read).
func machineWindow() (end func() *MachineCPU) {
	t0, ok0 := readCPUTicks()
	return func() *MachineCPU {
		t1, ok1 := readCPUTicks()
		busy, idle, steal := t1.busy-t0.busy, t1.idle-t0.idle, t1.steal-t0.steal
		total := busy + idle + steal
		if !ok0 || !ok1 || total <= 0 {
			return nil
		}
		return &MachineCPU{BusyPct: round1(100 * busy / total), StealPct: round1(100 * steal / total)}
	}
}
