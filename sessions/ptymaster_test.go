package sessions

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pasteSize is more than a PTY holds unread (its line discipline's 4 KB
// and the kernel's 64 KB of buffers), so writing it fills the PTY and the
// write must wait for the agent to read (ptyMaster.Write).
const pasteSize = 256 << 10

// TestLongPasteWaitsForTheAgent writes more than the PTY holds into an
// agent that reads only later: every byte must arrive, none dropped when
// the non-blocking descriptor says it is full.
func TestLongPasteWaitsForTheAgent(t *testing.T) {
	m := guardManager(t)
	s := spawnScript(t, m, `stty raw -echo; printf 'ready\r\n'; sleep 0.5; printf 'got %s\r\n' "$(head -c `+strconv.Itoa(pasteSize)+` | wc -c)"; sleep 30`)
	awaitScreen(t, s, "ready")
	if err := s.Input(strings.Repeat("a", pasteSize)); err != nil {
		t.Fatalf("writing %d bytes: %v", pasteSize, err)
	}
	awaitScreen(t, s, "got "+strconv.Itoa(pasteSize))
}

// TestPasteIntoAnAgentThatNeverReadsEnds: a write waiting for room ends
// when the agent does, not never.
func TestPasteIntoAnAgentThatNeverReadsEnds(t *testing.T) {
	m := guardManager(t)
	s := spawnScript(t, m, `stty raw -echo; printf 'ready\r\n'; sleep 60`)
	awaitScreen(t, s, "ready")
	wrote := make(chan error, 1)
	go func() { wrote <- s.Input(strings.Repeat("a", pasteSize)) }()
	select {
	case err := <-wrote:
		t.Fatalf("a write of %d bytes into an agent that reads nothing returned (%v): the PTY did not fill, so this test proves nothing", pasteSize, err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := s.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-wrote:
		if err == nil {
			t.Fatalf("the write into a killed agent reported no error")
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("a write waiting for room did not end within 20 s of the agent being killed")
	}
}
