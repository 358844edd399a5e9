//go:build unix

package forward

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"sync"

	"github.com/agentd/agentd/cmd/agentd/internal/daemonlink"
	"github.com/agentd/agentd/rpc/hosts"
)

// `agentd --stdio --host NAME`: the forwarder for another machine's agentd,
// for an editor that shows that machine's sessions (one sidecar per host).
// ssh runs the forwarder there; this one only moves the bytes, and where
// ssh ends before the other side said anything (unreachable, a key it
// refuses, no agentd there) it answers the editor's first request with
// ssh's own words, as the local forwarder does where no daemon runs.
// Closing stdin ends the connection only: the sessions there run on.

// firstWordsMax bounds what is kept of the editor's first messages, to
// answer them if ssh ends before the other side speaks.
const firstWordsMax = 1 << 20

func toHost(name string, start bool, stdin io.Reader, stdout, stderr io.Writer) int {
	list, err := daemonlink.ConfiguredHosts()
	if err != nil {
		return refuseEditor(stdin, stdout, stderr, err)
	}
	h, err := daemonlink.LookupHost(list, name)
	if err != nil {
		return refuseEditor(stdin, stdout, stderr, err)
	}
	if h.Local {
		return refuseEditor(stdin, stdout, stderr, fmt.Errorf("host %s is this machine: start agentd --stdio without --host", name))
	}
	argv := hosts.Argv(h, start)
	cmd := exec.Command(argv[0], argv[1:]...)
	var sshErr bytes.Buffer
	cmd.Stderr = &limitedWriter{w: &sshErr, n: 4 << 10}
	toSSH, err := cmd.StdinPipe()
	if err != nil {
		return refuseEditor(stdin, stdout, stderr, err)
	}
	fromSSH, err := cmd.StdoutPipe()
	if err != nil {
		return refuseEditor(stdin, stdout, stderr, err)
	}
	if err := cmd.Start(); err != nil {
		return refuseEditor(stdin, stdout, stderr, fmt.Errorf("host %s: %w", name, err))
	}

	// What the editor sent before the other side first spoke.
	var mu sync.Mutex
	var early bytes.Buffer
	spoke := false
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, rerr := stdin.Read(buf)
			if n > 0 {
				mu.Lock()
				if !spoke && early.Len()+n <= firstWordsMax {
					early.Write(buf[:n])
				}
				mu.Unlock()
				if _, werr := toSSH.Write(buf[:n]); werr != nil {
					return
				}
			}
			if rerr != nil {
				_ = toSSH.Close() // the editor left: so does the link; the sessions stay
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, rerr := fromSSH.Read(buf)
		if n > 0 {
			mu.Lock()
			spoke = true
			early.Reset()
			mu.Unlock()
			if _, werr := stdout.Write(buf[:n]); werr != nil {
				break
			}
		}
		if rerr != nil {
			break
		}
	}
	waitErr := cmd.Wait()
	mu.Lock()
	silent, firstWords := !spoke, append([]byte(nil), early.Bytes()...)
	mu.Unlock()
	words := hosts.LastLine(sshErr.String())
	if silent && waitErr != nil {
		if words == "" {
			words = waitErr.Error()
		}
		return refuseEditor(io.MultiReader(bytes.NewReader(firstWords), stdin), stdout, stderr, fmt.Errorf("host %s: %s", name, words))
	}
	if waitErr != nil {
		fmt.Fprintf(stderr, "agentd: the connection to host %s ended: %s\n", name, words)
		return 1
	}
	return 0
}

// limitedWriter keeps the last n bytes written to it at most (roughly).
type limitedWriter struct {
	w *bytes.Buffer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	l.w.Write(p)
	if l.w.Len() > l.n {
		b := append([]byte(nil), l.w.Bytes()[l.w.Len()-l.n:]...)
		l.w.Reset()
		l.w.Write(b)
	}
	return len(p), nil
}
