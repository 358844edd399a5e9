package sessions

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// readProc returns a process's name and argv from /proc.
func readProc(pid int) (comm string, argv []string, ok bool) {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	c, err := os.ReadFile(filepath.Join(dir, "comm"))
	if err != nil {
		return "", nil, false
	}
	cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
	if err != nil {
		return "", nil, false
	}
	for _, a := range strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00") {
		if a != "" {
			argv = append(argv, a)
		}
	}
	return strings.TrimSpace(string(c)), argv, true
}

// parents maps every process to its parent, from /proc/*/stat.
func parents() map[int]int {
	out := map[int]int{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The name (field 2) may hold spaces; the parent pid follows it.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		f := strings.Fields(rest)
		if len(f) > 1 {
			if ppid, err := strconv.Atoi(f[1]); err == nil {
				out[n] = ppid
			}
		}
	}
	return out
}
