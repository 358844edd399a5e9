package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/rpc/client"
	"github.com/agentd/agentd/rpc/protocol"
)

// The daemon section: what the per-user daemon's forwarder costs. One
// daemon, one session asking a y/n question again and again; two clients
// of it at once, one on the socket directly and one through `agentd
// --stdio` (what editors start). Each prompt reaches both; the forwarder's
// cost is its arrival minus the direct one, for the same notification.
// Beside them, `agentd wait --until blocked` is started before each prompt
// and its exit is timed against the direct client's arrival.
func init() {
	register(section{name: "daemon", what: "prompt → session/state directly on the daemon's socket vs through the forwarder, and agentd wait's wake-up", run: (*bench).daemon})
}

// asker works a moment after each answer, then asks again; it notes when it
// draws each prompt (bash's $EPOCHREALTIME, in µs) in $STAMPS, one a line.
const asker = `i=0; while :; do i=$((i+1)); echo "$EPOCHREALTIME" >>"$STAMPS"; read -r -p "Step $i? [y/N] " a; printf 'working on step %s\n' "$i"; sleep 0.4; done`

func (b *bench) daemon() (string, error) {
	rounds := 200
	if b.quick {
		rounds = 20
	}
	dir := filepath.Join(b.tmp, "daemon")
	socket := filepath.Join(dir, "run", "agentd.sock")
	env := append(os.Environ(), "AGENTD_SOCKET="+socket, "XDG_STATE_HOME="+filepath.Join(dir, "state"))
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

	// The direct client stamps each blocked state as it arrives.
	type arrival struct {
		prompt string
		at     time.Time
	}
	var mu sync.Mutex
	var direct []arrival
	wake := make(chan struct{}, 1)
	onNote := func(n client.Notification) {
		at := time.Now()
		if n.Method != protocol.NoteState {
			return
		}
		var st protocol.StateNotification
		if json.Unmarshal(n.Params, &st) != nil || st.State != "blocked" || st.Prompt == nil {
			return
		}
		mu.Lock()
		direct = append(direct, arrival{st.Prompt.Question, at})
		mu.Unlock()
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	ctx := context.Background()
	dc, err := client.Dial(ctx, socket, protocol.HelloParams{Version: "bench", Pid: os.Getpid(), Env: os.Environ()}, onNote)
	if err != nil {
		return "", err
	}
	defer dc.Close()
	var sess protocol.Session
	stamps := filepath.Join(dir, "stamps")
	if err := dc.Call(ctx, protocol.MethodSpawn, protocol.SpawnParams{Argv: []string{"bash", "--norc", "-c", asker}, Cwd: dir, Cols: 80, Rows: 24, Name: "asker",
		// The generic rules: the shell manifest's look at the process table
		// is not what this measures.
		Agent: "generic",
		Env:   map[string]*string{"STAMPS": &stamps}}, &sess); err != nil {
		return "", err
	}
	arrived := func(question string) (time.Time, error) {
		deadline := time.After(20 * time.Second)
		for {
			mu.Lock()
			for _, a := range direct {
				if a.prompt == question {
					mu.Unlock()
					return a.at, nil
				}
			}
			mu.Unlock()
			select {
			case <-wake:
			case <-deadline:
				return time.Time{}, fmt.Errorf("no blocked state for %q within 20 s", question)
			}
		}
	}
	if _, err := arrived("Step 1?"); err != nil {
		return "", err
	}
	var toDirect, added, wakeUp []time.Duration
	for i := 1; i <= rounds; i++ {
		next := fmt.Sprintf("Step %d?", i+1)
		if err := dc.Call(ctx, protocol.MethodInput, protocol.InputParams{SessionID: sess.SessionID, Data: "y\r"}, nil); err != nil {
			return "", err
		}
		// The wait starts while the session works (0.4 s before it asks).
		wait := exec.Command(b.agentd, "wait", sess.SessionID, "--until", "blocked", "--timeout", "20s")
		wait.Env = env
		waitDone := make(chan time.Time, 1)
		if err := wait.Start(); err != nil {
			return "", err
		}
		go func() { _ = wait.Wait(); waitDone <- time.Now() }()
		at, err := arrived(next)
		if err != nil {
			return "", err
		}
		if drawn, err := stampOf(stamps, i+1); err == nil {
			toDirect = append(toDirect, at.Sub(drawn))
		} else {
			return "", err
		}
		if ex := <-waitDone; wait.ProcessState.ExitCode() == 0 {
			wakeUp = append(wakeUp, ex.Sub(at))
		}
		// The same prompt through the forwarder.
		if err := fwd.waitPrompt(sess.SessionID, next, 20*time.Second); err != nil {
			return "", err
		}
		for _, s := range fwd.states(sess.SessionID) {
			if s.State == "blocked" && s.question() == next {
				added = append(added, s.At.Sub(at))
				break
			}
		}
	}
	row := func(what string, ds []time.Duration) string {
		slices.Sort(ds)
		if len(ds) == 0 {
			return fmt.Sprintf("| %s | 0 | - | - | - |\n", what)
		}
		return fmt.Sprintf("| %s | %d | %s | %s | %s |\n", what, len(ds), ms(quantile(ds, 0.5)), ms(quantile(ds, 0.99)), ms(ds[len(ds)-1]))
	}
	var sb strings.Builder
	sb.WriteString("| measured | n | p50 | p99 | max |\n|---|---|---|---|---|\n")
	sb.WriteString(row("prompt drawn → its session/state on a client of the daemon's socket", toDirect))
	sb.WriteString(row("added by the forwarder: its arrival minus the direct client's, same notification", added))
	sb.WriteString(row("`agentd wait --until blocked` exits, after the state reached the direct client", wakeUp))
	return sb.String(), nil
}

// stampOf reads the nth time the asker noted (1-based): bash's
// $EPOCHREALTIME, seconds and microseconds.
func stampOf(path string, n int) (time.Time, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, err
	}
	lines := strings.Fields(string(data))
	if len(lines) < n {
		return time.Time{}, fmt.Errorf("%s has %d stamps, want %d", path, len(lines), n)
	}
	sec, frac, _ := strings.Cut(lines[n-1], ".")
	s, err1 := strconv.ParseInt(sec, 10, 64)
	us, err2 := strconv.ParseInt((frac + "000000")[:6], 10, 64) // base 10: "083174" is not octal
	if err1 != nil || err2 != nil {
		return time.Time{}, fmt.Errorf("%s line %d: %q is not seconds.microseconds", path, n, lines[n-1])
	}
	return time.Unix(s, us*1000), nil
}
