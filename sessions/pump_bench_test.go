package sessions

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/sessions/term"
)

// The pump's hot path, without a PTY or a process: output written into a
// pipe that stands for the PTY, read by pump.read (the raw read, the
// emulator, output to viewers, the scheduling of a look), and the look
// itself (pump.takeDueLocked, Session.update). The pump's goroutine never
// runs: the benchmark is its loop.

// benchPump is a pump with one Claude session on a pipe, and the pipe's
// write end.
func benchPump(b *testing.B) (p *pump, s *Session, fd int32, w int) {
	b.Helper()
	rules, errs := detect.Load(nil, "")
	if len(errs) > 0 {
		b.Fatal(errs)
	}
	m, _ := rules.Lookup("claude")
	mgr := NewManager(Options{}, &recEvents{states: map[string][]State{}})
	p = mgr.pump
	p.running = true // no goroutine: the benchmark reads and looks itself
	s, fd, w = benchSession(b, mgr, m, "bench", term.New(term.Options{Cols: 120, Rows: 40}))
	return p, s, fd, w
}

// benchSession adds to mgr's pump a session of m's agent on terminal t,
// read from a pipe that stands for its PTY: fd is the end the pump reads,
// w the agent's.
func benchSession(b *testing.B, mgr *Manager, m *detect.Manifest, id string, t *term.Terminal) (s *Session, fd int32, w int) {
	b.Helper()
	var pipe [2]int
	if err := syscall.Pipe(pipe[:]); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { syscall.Close(pipe[1]) })
	if err := syscall.SetNonblock(pipe[0], true); err != nil {
		b.Fatal(err)
	}
	s = &Session{ID: id, mgr: mgr, manifest: m, base: m, machine: newMachine(startingState(m.Name, time.Now())),
		readDone: make(chan struct{}), exitDone: make(chan struct{})}
	s.lastPublished = s.machine.state
	benchTerminal(s, t)
	if err := benchAdd(mgr.pump, s, pipe[0]); err != nil {
		b.Fatal(err)
	}
	return s, int32(pipe[0]), pipe[1]
}

// readAndLook is one turn of the pump's loop: read fds, and look at every
// session due by far. forget drops each one's verdict first, so its rules
// run as they did before the verdict cache stood over a spinner's turn.
func readAndLook(p *pump, fds []int32, far time.Time, forget bool) {
	p.read(fds)
	p.mu.Lock()
	due := p.takeDueLocked(far)
	p.mu.Unlock()
	for _, d := range due {
		if forget {
			d.s.mu.Lock()
			d.verdicts = verdictCache{}
			d.s.mu.Unlock()
		}
		benchLook(d)
	}
}

// frame is a spinner frame of an agent at work, about 300 bytes.
func frame(i int) []byte {
	return fmt.Appendf(nil, "\x1b[?2026h\x1b[38;2;215;119;87m%c\x1b[39m Thinking… \x1b[2m(%ds · ↓ %d tokens · esc to interrupt)\x1b[22m\r\n"+
		"\x1b[2K\x1b[38;5;246m  ⎿  Read sessions/pump.go (279 lines)\x1b[39m\r\n"+
		"\x1b[2K\x1b[1m> \x1b[22m\x1b[7m \x1b[27m\r\n\x1b[3A\x1b[?2026l", []rune("·✢✳✶✻✽")[i%6], i, 100+i)
}

func BenchmarkPumpRead(b *testing.B) {
	p, _, fd, w := benchPump(b)
	frames := [][]byte{frame(0), frame(1), frame(2), frame(3), frame(4), frame(5)}
	fds := []int32{fd}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := syscall.Write(w, frames[i%len(frames)]); err != nil {
			b.Fatal(err)
		}
		p.read(fds)
	}
}

func BenchmarkPumpReadAndLook(b *testing.B) {
	p, _, fd, w := benchPump(b)
	frames := [][]byte{frame(0), frame(1), frame(2), frame(3), frame(4), frame(5)}
	fds := []int32{fd}
	far := time.Now().Add(time.Hour)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := syscall.Write(w, frames[i%len(frames)]); err != nil {
			b.Fatal(err)
		}
		readAndLook(p, fds, far, false)
	}
}
