package sessions

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/sessions/term"
)

// What a spinner's turn costs a session, before the verdict cache stood
// over it (cache=before: the rules run, as they did for every screen not
// exactly the last one) and now (cache=after). Compare the two in one
// sitting:
//
//	go test -run XXX -bench 'SpinnerFrame' -count 5 ./sessions/ | tee /tmp/spin.txt
//	benchstat -col /cache /tmp/spin.txt

// BenchmarkClassifySpinnerFrame is the classification alone, on two
// screens one after the other in an agent's recording that differ only in
// spinner glyphs its rules cannot tell apart: the first such pair in the
// agent's recordings.
func BenchmarkClassifySpinnerFrame(b *testing.B) {
	rules, errs := detect.Load(nil, "")
	if len(errs) > 0 {
		b.Fatal(errs)
	}
	for _, agent := range []string{"claude", "codex", "copilot", "gemini", "opencode"} {
		m, pair := spinnerPair(b, rules, agent)
		b.Run("agent="+agent+"/cache=before", func(b *testing.B) {
			last := pair[0]
			for i := range b.N {
				sc := pair[(i+1)%2]
				if !sameScreen(last, sc) {
					_ = m.Classify(sc)
				}
				last = sc
			}
		})
		b.Run("agent="+agent+"/cache=after", func(b *testing.B) {
			var c verdictCache
			c.store(m, pair[0], m.Classify(pair[0]))
			for i := range b.N {
				sc := pair[(i+1)%2]
				if _, why := c.lookup(m, sc); why == reuseNone {
					b.Fatal("a spinner's turn missed the cache")
				}
			}
		})
	}
}

// spinnerPair is the first two screens in agent's recordings the cache
// carries a verdict across for a spinner's turn.
func spinnerPair(b *testing.B, rules *detect.Set, agent string) (*detect.Manifest, [2]detect.Screen) {
	b.Helper()
	files, _ := filepath.Glob("../fixtures/" + agent + "/*/sessions/*.json")
	for _, f := range files {
		m, looks := recordingLooks(b, rules, f)
		for i := 1; i < len(looks); i++ {
			a, c := looks[i-1].Screen, looks[i].Screen
			if reusable(m, m.Classify(a), a, c) == reuseSpinner {
				return m, [2]detect.Screen{a, c}
			}
		}
	}
	b.Fatalf("%s: no spinner's turn the cache stands over in %d recordings", agent, len(files))
	return nil, [2]detect.Screen{}
}

// BenchmarkSpinnerFrameLook is a spinner frame's whole way through a
// session, as BenchmarkPumpReadAndLook: the read, the emulator, the look
// (snapshot, classification, the machine's step). Its frames turn only the
// glyph, among those Claude's spinner row's rule cannot tell apart.
func BenchmarkSpinnerFrameLook(b *testing.B) {
	for _, cache := range []string{"before", "after"} {
		b.Run("cache="+cache, func(b *testing.B) {
			p, s, fd, w := benchPump(b)
			var frames [][]byte
			for _, g := range "✢✳✶✽" {
				frames = append(frames, fmt.Appendf(nil, "\x1b[?2026h\x1b[38;2;215;119;87m%c\x1b[39m Thinking… \x1b[2m(3s · ↓ 120 tokens · esc to interrupt)\x1b[22m\r\n"+
					"\x1b[2K\x1b[38;5;246m  ⎿  Read sessions/pump.go (279 lines)\x1b[39m\r\n"+
					"\x1b[2K\x1b[1m> \x1b[22m\x1b[7m \x1b[27m\r\n\x1b[3A\x1b[?2026l", g))
			}
			fds := []int32{fd}
			far := time.Now().Add(time.Hour)
			look := func(i int) {
				if _, err := syscall.Write(w, frames[i%len(frames)]); err != nil {
					b.Fatal(err)
				}
				// Before, the rules ran on every frame: on every screen
				// not exactly the last one.
				readAndLook(p, fds, far, cache == "before")
			}
			look(0)
			if s.machine.state.Name != Working {
				b.Fatalf("the frame reads %s (%s), not working", s.machine.state.Name, s.machine.state.Reason)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				look(i + 1)
			}
		})
	}
}

// BenchmarkSpinnerSessions is n sessions of the demo agent on one pump,
// each drawing one frame of fixtures/replay's spinner (what
// cmd/agentd's BenchmarkSpinnerCPU spawns): its glyph turns every frame
// and its seconds every tenth. An op is one frame for every session: the
// reads, the emulator, the looks; the agents' own writes are not timed.
// Profile with -cpuprofile to see where a spinner's frame goes.
func BenchmarkSpinnerSessions(b *testing.B) {
	rules, errs := detect.Load(nil, "")
	if len(errs) > 0 {
		b.Fatal(errs)
	}
	m, _ := rules.Lookup("demo")
	glyphs := []string{"·", "✢", "✳", "✶", "✻", "✽"}
	frame := func(i int) []byte {
		return fmt.Appendf(nil, "\x1b[3;1H\x1b[2K%s Thinking… (%ds · esc to interrupt)", glyphs[i%len(glyphs)], i/10)
	}
	for _, n := range []int{50, 200} {
		for _, cache := range []string{"before", "after"} {
			b.Run(fmt.Sprintf("sessions=%d/cache=%s", n, cache), func(b *testing.B) {
				mgr := NewManager(Options{}, &recEvents{states: map[string][]State{}})
				p := mgr.pump
				p.running = true // no goroutine: the benchmark reads and looks itself
				var fds []int32
				var writers []int
				var all []*Session
				for k := range n {
					s, fd, w := benchSession(b, mgr, m, fmt.Sprint("bench", k), newBenchTerm())
					fds = append(fds, fd)
					writers = append(writers, w)
					all = append(all, s)
				}
				far := time.Now().Add(time.Hour)
				round := func(i int, timed bool) {
					if timed {
						b.StopTimer()
					}
					f := frame(i)
					for _, w := range writers {
						if _, err := syscall.Write(w, f); err != nil {
							b.Fatal(err)
						}
					}
					if timed {
						b.StartTimer()
					}
					readAndLook(p, fds, far, cache == "before")
				}
				for _, w := range writers {
					if _, err := syscall.Write(w, []byte("\x1b[?1049h\x1b[H\x1b[2J> a task\r\n")); err != nil {
						b.Fatal(err)
					}
				}
				round(0, false)
				if st := all[0].machine.state; st.Name != Working {
					b.Fatalf("the frame reads %s (%s), not working", st.Name, st.Reason)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					round(i+1, true)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/frame")
			})
		}
	}
}

// newBenchTerm is a terminal the size cmd/agentd's benchmarks spawn.
func newBenchTerm() *term.Terminal { return term.New(term.Options{Cols: 120, Rows: 40}) }
