package devmode_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// groupPids lists the processes in process group pgid (the README command
// runs `go run`, whose child is the real server).
func groupPids(t *testing.T, pgid int) []int {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the process ended
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces, so cut at ')'.
		rest := string(b[strings.LastIndexByte(string(b), ')')+2:])
		fields := strings.Fields(rest)
		if len(fields) > 2 && fields[2] == strconv.Itoa(pgid) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			pids = append(pids, pid)
		}
	}
	return pids
}

// remotePorts returns the remote TCP ports of every socket the processes hold.
func remotePorts(t *testing.T, pids []int) map[int]bool {
	t.Helper()
	inodes := map[string]bool{}
	for _, pid := range pids {
		fds, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/fd/*")
		for _, fd := range fds {
			if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
			}
		}
	}
	ports := map[int]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || !inodes[fields[9]] {
				continue
			}
			_, port, _ := strings.Cut(fields[2], ":")
			if n, err := strconv.ParseInt(port, 16, 32); err == nil && n != 0 {
				ports[int(n)] = true
			}
		}
		f.Close()
	}
	return ports
}
