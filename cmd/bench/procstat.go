package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of utime/stime in /proc/<pid>/stat; it is
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// cpuSeconds returns a process's user + system CPU time so far.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields count from after ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime/stime", pid)
	}
	return (ut + st) / clockTicks, nil
}

// peakRSSMB returns VmHWM, the process's peak resident set, in MiB.
func peakRSSMB(pid int) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmHWM", pid)
}

// pidListening finds the process listening on a local TCP port (the shared
// MariaDB and Redis servers: only their CPU time is read), or 0. Other
// servers of the same name (private ones started by test suites) are not it.
func pidListening(port int) int {
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" { // 0A: LISTEN
				continue
			}
			_, hexPort, ok := strings.Cut(f[1], ":")
			if p, err := strconv.ParseInt(hexPort, 16, 32); ok && err == nil && int(p) == port {
				inodes["socket:["+f[9]+"]"] = true
			}
		}
	}
	if len(inodes) == 0 {
		return 0
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && inodes[target] {
			pid, _ := strconv.Atoi(strings.Split(fd, "/")[2])
			return pid
		}
	}
	return 0
}

// portOf returns the port of a host:port address, or 0.
func portOf(addr string) int {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(p)
	return n
}

// cpuSnapshot is the CPU seconds of each watched process at one moment.
type cpuSnapshot map[int]float64

// watched names the processes whose CPU the bench accounts.
type watched map[string][]int

func (w watched) snapshot() cpuSnapshot {
	out := cpuSnapshot{}
	for _, pids := range w {
		for _, pid := range pids {
			if s, err := cpuSeconds(pid); err == nil {
				out[pid] = s
			}
		}
	}
	return out
}

// used is the CPU a named group spent between two snapshots (a process gone
// by the second one is left out).
// cpu is each followed process kind's CPU between two snapshots, in
// productProcesses' order, and per 1,000 of orders (none when 0).
func (w watched) cpu(a, b cpuSnapshot, orders int) []Resource {
	var out []Resource
	for _, name := range productProcesses {
		if len(w[name]) == 0 {
			continue
		}
		used := w.used(name, a, b)
		r := Resource{Process: name, CPUSeconds: round2(used)}
		if orders > 0 {
			r.CPUPer1k = round2(used / float64(orders) * 1000)
		}
		out = append(out, r)
	}
	return out
}

func (w watched) used(name string, a, b cpuSnapshot) float64 {
	var sum float64
	for _, pid := range w[name] {
		if t1, ok := b[pid]; ok {
			sum += t1 - a[pid]
		}
	}
	return sum
}

// loadAvg returns /proc/loadavg's first three numbers.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
