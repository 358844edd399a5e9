package term

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
)

// BenchmarkFeed pushes whole real agent sessions (fixtures/*/*/sessions/*.raw)
// through the terminal, in the chunk sizes a PTY read delivers, and reports
// throughput. The largest recording per agent is used.
func BenchmarkFeed(b *testing.B) {
	files, _ := filepath.Glob("../../fixtures/*/*/sessions/*.raw")
	largest := map[string]string{}
	size := map[string]int64{}
	for _, f := range files {
		agent := filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(f))))
		if st, err := os.Stat(f); err == nil && st.Size() > size[agent] {
			largest[agent], size[agent] = f, st.Size()
		}
	}
	if len(largest) == 0 {
		b.Skip("no session recordings under fixtures/")
	}
	agents := make([]string, 0, len(largest))
	for a := range largest {
		agents = append(agents, a)
	}
	sort.Strings(agents)
	for _, a := range agents {
		raw, err := os.ReadFile(largest[a])
		if err != nil {
			b.Fatal(err)
		}
		b.Run(a, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				t := New(Options{Cols: 120, Rows: 40, Reply: func([]byte) {}})
				for off := 0; off < len(raw); off += 4096 {
					t.Write(raw[off:min(off+4096, len(raw))])
				}
				t.Snapshot()
			}
		})
	}
}

// BenchmarkSnapshot renders a 120x40 screen, which agentd does before each
// classification.
func BenchmarkSnapshot(b *testing.B) {
	files, _ := filepath.Glob("../../fixtures/*/*/sessions/*.raw")
	if len(files) == 0 {
		b.Skip("no session recordings under fixtures/")
	}
	sort.Strings(files)
	raw, _ := os.ReadFile(files[0])
	t := New(Options{Cols: 120, Rows: 40})
	t.Write(raw)
	b.ReportAllocs()
	for b.Loop() {
		t.Snapshot()
	}
}

// BenchmarkSnapshotFrame is the live path's unit of work: write a frame,
// then render the screen. "spinner" redraws one row, "repaint" clears and
// redraws all 40; "dirty" is Snapshot as shipped (only the rows vt10x
// marked dirty), "all" renders every row (SnapshotAll, the 50 ms poll's way).
// The screen starts as a real session's last one.
func BenchmarkSnapshotFrame(b *testing.B) {
	files, _ := filepath.Glob("../../fixtures/*/*/sessions/*.raw")
	if len(files) == 0 {
		b.Skip("no session recordings under fixtures/")
	}
	sort.Strings(files)
	raw, _ := os.ReadFile(files[0])
	var repaint []byte
	repaint = append(repaint, "\x1b[H\x1b[2J"...)
	for y := range 40 {
		repaint = fmt.Appendf(repaint, "\x1b[%d;1H%3d │ some source text that fills half of the row, like code does", y+1, y)
	}
	frames := map[string][][]byte{
		"spinner": {[]byte("\x1b[3;1H\x1b[2K✢ Thinking… (1s · esc to interrupt)"), []byte("\x1b[3;1H\x1b[2K✳ Thinking… (2s · esc to interrupt)")},
		"repaint": {repaint, append([]byte("\x1b[?25l"), repaint...)},
	}
	for _, kind := range []string{"spinner", "repaint"} {
		for _, how := range []string{"dirty", "all"} {
			b.Run(kind+"/"+how, func(b *testing.B) {
				t := New(Options{Cols: 120, Rows: 40})
				t.Write(raw)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					t.Write(frames[kind][i%2])
					if how == "all" {
						t.SnapshotAll()
					} else {
						t.Snapshot()
					}
					i++
				}
			})
		}
	}
}

// BenchmarkTerminalHeap reports the live heap one 120x40 terminal holds
// after drawing a real session to its end (its scrollback filled by it):
// 50 terminals, each fed one of the largest recordings, measured after a GC.
func BenchmarkTerminalHeap(b *testing.B) {
	files, _ := filepath.Glob("../../fixtures/*/*/sessions/*.raw")
	if len(files) == 0 {
		b.Skip("no session recordings under fixtures/")
	}
	sort.Slice(files, func(i, j int) bool {
		a, _ := os.Stat(files[i])
		c, _ := os.Stat(files[j])
		return a.Size() > c.Size()
	})
	var raws [][]byte
	for _, f := range files[:min(8, len(files))] {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		raws = append(raws, raw)
	}
	const n = 50
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		terms := make([]*Terminal, n)
		for i := range terms {
			terms[i] = New(Options{Cols: 120, Rows: 40, Reply: func([]byte) {}})
			raw := raws[i%len(raws)]
			for off := 0; off < len(raw); off += 4096 {
				terms[i].Write(raw[off:min(off+4096, len(raw))])
			}
			terms[i].Snapshot()
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n/1024, "KB/terminal")
		runtime.KeepAlive(terms)
	}
}
