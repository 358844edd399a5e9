package agentreports

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A real Codex rollout (recorded by fixtures/record) read incrementally,
// with its last line arriving in two pieces.
func TestCodexLogFromRealRollout(t *testing.T) {
	data, err := os.ReadFile("../../fixtures/codex/0.171.0/logs/interrupt.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	now := time.Now().UTC()
	dir := filepath.Join(home, "sessions", now.Format("2006"), now.Format("01"), now.Format("02"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "rollout-test.jsonl")
	// The recording's session_meta names the folder Codex ran in.
	i := bytes.Index(data, []byte(`"cwd":"`)) + len(`"cwd":"`)
	cwd := string(data[i : i+bytes.IndexByte(data[i:], '"')])

	lines := bytes.SplitAfter(data, []byte("\n"))
	aborted := -1
	for n, l := range lines {
		if bytes.Contains(l, []byte(`"type":"turn_aborted"`)) {
			aborted = n
		}
	}
	if aborted < 0 {
		t.Fatal("the recording has no turn_aborted")
	}
	head := bytes.Join(lines[:aborted], nil)
	cut := len(lines[aborted]) / 2
	if err := os.WriteFile(path, append(head, lines[aborted][:cut]...), 0o644); err != nil {
		t.Fatal(err)
	}

	other := newRolloutLog([]string{"CODEX_HOME=" + home}, "/somewhere/else", time.Now().Add(-time.Minute))
	if _, wait := other.Poll("s9"); wait != 0 || other.path != "" {
		t.Fatalf("a session in another folder took the file: %q", other.path)
	}
	l := newRolloutLog([]string{"CODEX_HOME=" + home}, cwd, time.Now().Add(-time.Minute))
	rep, _ := l.Poll("s1")
	if l.path != path || rep == nil || rep.Reason != "log.task_started" || rep.Record.State != "working" {
		t.Fatalf("first read: path %q, report %+v", l.path, rep)
	}
	if _, wait := l.Poll("s1"); wait <= 0 || wait > logEvery {
		t.Fatalf("a look right after a look: wait %v, want up to %v", wait, logEvery)
	}
	l.readAt = time.Time{}
	if rep, _ := l.Poll("s1"); rep != nil {
		t.Fatalf("half a line made a report: %+v", rep)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(bytes.Join(lines[aborted:], nil)[cut:])
	f.Close()
	l.readAt = time.Time{}
	rep, _ = l.Poll("s1")
	if rep == nil || rep.Reason != "log.turn_aborted" || rep.Record.State != "done" || rep.Outcome != "interrupted" {
		t.Fatalf("after the rest of the line: %+v", rep)
	}
	if rep.At.Year() != 2026 {
		t.Fatalf("the report's time is %v, want the line's timestamp (its events are weighed by it)", rep.At)
	}
	l.Release()

	// Not found, the look backs off.
	var waits []time.Duration
	for range 6 {
		other.readAt = time.Time{}
		other.Poll("s9")
		waits = append(waits, other.wait)
	}
	if waits[0] != 2*logEvery || waits[5] != findEveryMax {
		t.Fatalf("waits between looks for a missing file: %v", waits)
	}
}
