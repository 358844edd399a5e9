package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentd/agentd/rpc/protocol"
)

// The web section: what `agentd web` adds with 50 busy sessions. One
// daemon hosts 50 sessions looping real recordings; its CPU is measured
// with no page server, then with `agentd web` running and no page open,
// then with one page open (signed in, its live feed watching one busy
// session's screen, as the page does when a session is opened), then with
// the page server gone again. The page is an HTTP client reading the same
// event stream a browser reads; drawing it is the phone's work, not the
// host's.
func init() {
	register(section{name: "web", what: "daemon and agentd web CPU with 50 looping sessions: web off, on with no page, on with one page watching a screen", run: (*bench).web})
}

// cpuTicks is a process's CPU ticks (user + kernel, USER_HZ).
func cpuTicks(pid int) (int64, error) {
	u, k, err := procCPUTicks(pid)
	return u + k, err
}

func (b *bench) web() (string, error) {
	const n = 50
	warm, window := 4*time.Second, 20*time.Second
	if b.quick {
		warm, window = 2*time.Second, 5*time.Second
	}
	recs, err := b.benchRecordings()
	if err != nil {
		return "", err
	}
	const hold = 500 * time.Millisecond
	rate, err := loopRate(recs, hold)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(b.tmp, "web")
	socket := filepath.Join(dir, "run", "agentd.sock")
	env := append(os.Environ(), "AGENTD_SOCKET="+socket, "XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"AGENTD_WEB_TOKEN_FILE="+filepath.Join(dir, "web-token"))
	fwd, err := b.startClient([]string{"--stdio"}, env) // starts the daemon
	if err != nil {
		return "", err
	}
	defer func() {
		stop := exec.Command(b.agentd, "stop", "--force")
		stop.Env = env
		_ = stop.Run()
		fwd.close()
	}()
	var hello struct {
		Daemon struct{ Pid int } `json:"daemon"`
	}
	if err := fwd.call(protocol.MethodInitialize, map[string]any{"clientInfo": map[string]string{"name": "agentd-bench"}}, &hello); err != nil {
		return "", err
	}
	daemonPid := hello.Daemon.Pid
	var watched string
	for i := range n {
		r := recs[i%len(recs)]
		id, err := fwd.spawn(map[string]any{
			"argv": []string{b.replay, "-raw", r.Raw, "-timing", r.Timing, "-maxgap", loopMaxGap.String(), "-hold", hold.String(), "-loop"},
			"cwd":  dir, "cols": r.Cols, "rows": r.Rows, "agent": r.Agent, "hooks": false,
		})
		if err != nil {
			return "", fmt.Errorf("spawn %d: %w", i, err)
		}
		if i == 0 {
			watched = id
		}
	}
	time.Sleep(warm)

	// measure returns the daemon's and (when webPid is not 0) agentd web's
	// CPU over the window, in % of one core.
	measure := func(webPid int) (daemon, web float64, err error) {
		d0, err := cpuTicks(daemonPid)
		if err != nil {
			return 0, 0, err
		}
		var w0, w1 int64
		if webPid != 0 {
			if w0, err = cpuTicks(webPid); err != nil {
				return 0, 0, err
			}
		}
		t0 := time.Now()
		time.Sleep(window)
		d1, err := cpuTicks(daemonPid)
		if err != nil {
			return 0, 0, err
		}
		if webPid != 0 {
			if w1, err = cpuTicks(webPid); err != nil {
				return 0, 0, err
			}
		}
		secs := time.Since(t0).Seconds()
		return float64(d1-d0) / secs, float64(w1-w0) / secs, nil
	}

	type phase struct {
		what           string
		daemon, web    float64
		events, kbytes float64 // per second, to the page
		webOn          bool
	}
	var phases []phase

	b.logf("web: %d looping sessions, no page server", n)
	d, _, err := measure(0)
	if err != nil {
		return "", err
	}
	phases = append(phases, phase{what: "off (no `agentd web`)", daemon: d})

	web := exec.Command(b.agentd, "web", "--listen", "127.0.0.1:0")
	web.Env = env
	out, err := web.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := web.Start(); err != nil {
		return "", err
	}
	defer func() { _ = web.Process.Kill(); _ = web.Wait() }()
	link, err := readLink(out)
	if err != nil {
		return "", err
	}
	b.logf("web: agentd web running, no page")
	time.Sleep(warm)
	d, w, err := measure(web.Process.Pid)
	if err != nil {
		return "", err
	}
	phases = append(phases, phase{what: "on, no page open", daemon: d, web: w, webOn: true})

	b.logf("web: one page open, watching session %s", watched)
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	res, err := client.Get(link) // signs in, follows the redirect to /
	if err != nil {
		return "", err
	}
	res.Body.Close()
	base := link[:strings.Index(link, "/login")]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/events?watch="+watched, nil)
	res, err = client.Do(req)
	if err != nil {
		return "", err
	}
	if res.StatusCode != 200 {
		return "", fmt.Errorf("the page's event stream: %s", res.Status)
	}
	var events, bytes atomic.Int64
	go func() {
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			bytes.Add(int64(len(sc.Bytes()) + 1))
			if strings.HasPrefix(sc.Text(), "event: ") {
				events.Add(1)
			}
		}
	}()
	time.Sleep(warm)
	e0, b0 := events.Load(), bytes.Load()
	t0 := time.Now()
	d, w, err = measure(web.Process.Pid)
	if err != nil {
		return "", err
	}
	secs := time.Since(t0).Seconds()
	phases = append(phases, phase{what: "on, one page open on a busy session", daemon: d, web: w, webOn: true,
		events: float64(events.Load()-e0) / secs, kbytes: float64(bytes.Load()-b0) / secs / 1024})
	cancel()
	_ = web.Process.Kill()
	_ = web.Wait()

	b.logf("web: page server gone again")
	time.Sleep(warm)
	d, _, err = measure(0)
	if err != nil {
		return "", err
	}
	phases = append(phases, phase{what: "off again", daemon: d})

	off := (phases[0].daemon + phases[3].daemon) / 2
	var sb strings.Builder
	fmt.Fprintf(&sb, "One daemon, %d sessions looping the committed recordings (about %.0f writes a second each, pauses capped at %s); CPU over %s per phase from /proc/<pid>/stat, in the order below. The page is an HTTP client signed in with the printed link, reading `/api/events?watch=<a busy session>` as the page does.\n\n",
		n, rate, loopMaxGap, window)
	sb.WriteString("| phase | daemon CPU | agentd web CPU | added (daemon − mean of the two offs, + web) | to the page |\n|---|---|---|---|---|\n")
	for _, p := range phases {
		webCPU, added, page := "—", "—", "—"
		if p.webOn {
			webCPU = fmt.Sprintf("%.1f %%", p.web)
			added = fmt.Sprintf("%+.1f %%", p.daemon-off+p.web)
		}
		if p.events > 0 {
			page = fmt.Sprintf("%.1f events/s, %.1f KB/s", p.events, p.kbytes)
		}
		fmt.Fprintf(&sb, "| %s | %.1f %% | %s | %s | %s |\n", p.what, p.daemon, webCPU, added, page)
	}
	return sb.String(), nil
}

// readLink reads agentd web's stdout up to the link it prints.
func readLink(out interface{ Read([]byte) (int, error) }) (string, error) {
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "http") && strings.Contains(l, "/login?code=") {
			go func() {
				for sc.Scan() {
				}
			}()
			return l, nil
		}
	}
	return "", fmt.Errorf("agentd web ended before printing its link: %v", sc.Err())
}
