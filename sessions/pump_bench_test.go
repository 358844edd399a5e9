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

// benchPump is a pump with one terminal session on a pipe, and the pipe's
// write end.
func benchPump(b *testing.B) (p *pump, s *Session, fd int32, w int) {
	b.Helper()
	rules, errs := detect.Load(nil, "")
	if len(errs) > 0 {
		b.Fatal(errs)
	}
	m, _ := rules.Lookup("claude")
	mgr := NewManager(Options{}, &recEvents{states: map[string][]State{}})
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { syscall.Close(fds[1]) })
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		b.Fatal(err)
	}
	p = mgr.pump
	p.running = true // no goroutine: the benchmark reads and looks itself
	s = &Session{ID: "bench", mgr: mgr, manifest: m, base: m, machine: newMachine(startingState(m.Name, time.Now())),
		readDone: make(chan struct{}), exitDone: make(chan struct{})}
	s.lastPublished = s.machine.state
	benchTerminal(s, term.New(term.Options{Cols: 120, Rows: 40}))
	if err := benchAdd(p, s, fds[0]); err != nil {
		b.Fatal(err)
	}
	return p, s, int32(fds[0]), fds[1]
}

// frame is a spinner frame of an agent at work, about 300 bytes.
func frame(i int) []byte {
	return fmt.Appendf(nil, "\x1b[?2026h\x1b[38;2;215;119;87m%c\x1b[39m Thinking… \x1b[2m(%ds · ↓ %d tokens · esc to interrupt)\x1b[22m\r\n"+
		"\x1b[2K\x1b[38;5;246m  ⎿  Read sessions/pump.go (279 lines)\x1b[39m\r\n"+
		"\x1b[2K\x1b[1m> \x1b[22m\x1b[7m \x1b[27m\r\n\x1b[3A\x1b[?2026l", "·✢✳✶✻✽"[i%6], i, 100+i)
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
		p.read(fds)
		p.mu.Lock()
		due := p.takeDueLocked(far)
		p.mu.Unlock()
		for _, x := range due {
			benchLook(x)
		}
	}
}
