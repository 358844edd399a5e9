// Package hosts reaches the agentd of another machine: ssh runs
// `agentd --stdio` there, the forwarder an editor runs, and the protocol
// goes over ssh's stdin and stdout. ssh is the person's own, with their
// keys, agent and known_hosts; nothing listens on a port for this, and
// nothing a session holds (names, answers, text) is ever put on ssh's
// command line: it all goes as JSON-RPC data. docs/hosts.md.
package hosts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/rpc/client"
	"github.com/agentd/agentd/rpc/config"
	"github.com/agentd/agentd/rpc/protocol"
)

// Argv is the ssh command that reaches h's agentd. start says whether the
// forwarder there may start a daemon where none runs (run does; ls and
// the web page only look).
//
// BatchMode: no password or passphrase is asked, there is nobody to ask,
// so a machine the person's keys do not open is unreachable, and says so.
// ServerAlive: a link that drops is noticed within 45 s, not at the next
// write.
func Argv(h config.Host, start bool) []string {
	argv := []string{"ssh", "-T",
		"-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
		"-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3"}
	argv = append(argv, h.SSHOptions...)
	remote := h.Agentd + " --stdio"
	if !start {
		remote += " --no-start"
	}
	return append(argv, "--", h.SSH, remote)
}

// Remote is a connection to another machine's agentd.
type Remote struct {
	*client.Client
	Host config.Host
	// Init is what the daemon there said to initialize: its version, its
	// agents.
	Init protocol.InitializeResult
}

// ErrNoDaemon: the machine answers, and no agentd daemon runs there.
var ErrNoDaemon = errors.New("no agentd daemon runs there")

// Dial runs ssh to h and initializes as the client who. The error says what went
// wrong: ssh's own last words where it ended (unreachable,
// refused, no key), ErrNoDaemon where nothing runs there and start is
// false, or no answer before ctx ends.
func Dial(ctx context.Context, h config.Host, start bool, who protocol.ClientInfo, onNote func(client.Notification)) (*Remote, error) {
	if h.Local || h.SSH == "" {
		return nil, errors.New("not a host reached over ssh")
	}
	argv := Argv(h, start)
	cmd := exec.Command(argv[0], argv[1:]...)
	p := &pipe{cmd: cmd, exited: make(chan struct{})}
	cmd.Stderr = &p.stderr
	// Pipes of our own, not cmd's: Wait closes those as ssh ends, under
	// a read of its last answer.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, p.w, p.r = inR, outW, inW, outR
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	r := &Remote{Client: client.NewForwardedClient(p, onNote), Host: h}
	answered := make(chan error, 1)
	go func() {
		answered <- r.Call(ctx, protocol.MethodInitialize, protocol.InitializeParams{ClientInfo: &who}, &r.Init)
	}()
	select {
	case err = <-answered:
	case <-p.exited:
		// Its last answer may still be on its way: the forwarder there
		// refuses initialize, then ends, where no daemon runs.
		select {
		case err = <-answered:
		case <-time.After(time.Second):
			err = errors.New("ssh ended")
		}
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		err = fmt.Errorf("no answer: %w", ctx.Err())
	}
	if err != nil {
		var je *jsonrpc2.Error
		isReply := errors.As(err, &je)
		r.Close()
		switch {
		case isReply && je.Code == protocol.CodeNoDaemon:
			err = ErrNoDaemon
		case !isReply && ctx.Err() == nil:
			err = p.ended() // the link: ssh's own words say why
		}
		return nil, err
	}
	return r, nil
}

// Ended is closed when the ssh connection ends: the link dropped, the
// machine went away, or Close.
func (r *Remote) Ended() <-chan struct{} { return r.Done() }

// pipe is ssh's stdin and stdout as one stream. Close ends ssh's stdin,
// which ends the forwarder there, then waits a while for ssh to leave.
type pipe struct {
	cmd     *exec.Cmd
	r       io.ReadCloser
	w       io.WriteCloser
	stderr  tail
	exited  chan struct{}
	waitErr error
	once    sync.Once
}

func (p *pipe) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipe) Write(b []byte) (int, error) { return p.w.Write(b) }

// closeWait is how long ssh is given to leave after its stdin closes.
const closeWait = 5 * time.Second

func (p *pipe) Close() error {
	p.once.Do(func() {
		_ = p.w.Close()
		select {
		case <-p.exited:
		case <-time.After(closeWait):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		_ = p.r.Close()
	})
	return nil
}

// ended says how ssh ended, in its own last words.
func (p *pipe) ended() error {
	<-p.exited
	words := p.stderr.last()
	if words != "" && !strings.HasPrefix(words, "ssh:") {
		words = "ssh: " + words
	}
	switch {
	case words != "" && p.waitErr != nil:
		return fmt.Errorf("%s (%v)", words, p.waitErr)
	case words != "":
		return errors.New(words)
	case p.waitErr != nil:
		return fmt.Errorf("ssh ended: %v", p.waitErr)
	}
	return errors.New("ssh ended")
}

// tail keeps the end of what ssh writes on stderr.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 4 << 10

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > tailMax {
		t.buf = t.buf[len(t.buf)-tailMax:]
	}
	return len(b), nil
}

// last is the last line that says something, made safe to print.
func (t *tail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return LastLine(string(t.buf))
}

// LastLine is the last line of what ssh wrote that says something, without
// control characters: its own words on why it ended.
func LastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return strings.Map(func(r rune) rune {
				if r < 0x20 || r == 0x7f {
					return -1
				}
				return r
			}, l)
		}
	}
	return ""
}
