package sessions

import (
	"os"
	"slices"
	"testing"
	"time"
)

// Both readiness sets this OS can use, the portable one always: on Linux
// that is epoll and select, so what macOS runs is tested here too.
func readinessSets(t *testing.T) map[string]func() (readiness, error) {
	sets := map[string]func() (readiness, error){
		"select": func() (readiness, error) { return newSelectSet() },
	}
	if !Portable() {
		sets["platform"] = platformReadiness
	}
	return sets
}

func nonblockingPipe(t *testing.T) (r, w *os.File, fd int) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	rc, err := r.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	_ = rc.Control(func(f uintptr) { fd = int(f) })
	return r, w, fd
}

func TestReadiness(t *testing.T) {
	for name, open := range readinessSets(t) {
		t.Run(name, func(t *testing.T) {
			set, err := open()
			if err != nil {
				t.Fatal(err)
			}
			defer set.close()
			_, w1, fd1 := nonblockingPipe(t)
			r2, w2, fd2 := nonblockingPipe(t)
			for _, fd := range []int{fd1, fd2} {
				if err := set.add(fd); err != nil {
					t.Fatal(err)
				}
			}
			fds := make([]int32, 8)
			if n := set.ready(fds); n != 0 {
				t.Fatalf("nothing written, yet ready says %v", fds[:n])
			}

			// A wait with nothing to read ends at its deadline.
			set.arm(time.Now().Add(20 * time.Millisecond))
			if n := set.wait(fds); n != 0 {
				t.Fatalf("a wait past its deadline returned %v", fds[:n])
			}

			// Output during a wait with no deadline wakes it with that PTY.
			// A wait may end early with nothing (the wake an earlier arm
			// left behind, which the pump takes as a look and waits again):
			// wait again, as the pump does, until the write shows.
			set.arm(time.Time{})
			go func() { time.Sleep(20 * time.Millisecond); w2.Write([]byte("x")) }()
			n := set.wait(fds)
			for spurious := 0; n == 0 && spurious < 3; spurious++ {
				n = set.wait(fds)
			}
			if n != 1 || fds[0] != int32(fd2) {
				t.Fatalf("after a write to the second pipe the wait returned %v, want [%d]", fds[:n], fd2)
			}
			// Output waiting does not end a sleep (the pump's tick), and the
			// timer that ends it is not reported as a PTY.
			start := time.Now()
			set.sleep(start.Add(20 * time.Millisecond))
			if d := time.Since(start); d < 20*time.Millisecond {
				t.Fatalf("a sleep of 20 ms with output waiting ended after %v", d)
			}
			if n := set.ready(fds); n != 1 || fds[0] != int32(fd2) {
				t.Fatalf("level-triggered: unread output is still ready, got %v", fds[:n])
			}
			var b [8]byte
			r2.Read(b[:])

			// Arming an earlier deadline ends a wait under way.
			set.arm(time.Time{})
			go func() { time.Sleep(20 * time.Millisecond); set.arm(time.Now()) }()
			done := make(chan int, 1)
			go func() { done <- set.wait(fds) }()
			select {
			case n := <-done:
				if n != 0 {
					t.Fatalf("a wait woken by arm returned %v", fds[:n])
				}
			case <-time.After(30 * time.Second):
				t.Fatal("arm did not end the wait under way within 30 s")
			}

			// A removed descriptor is no longer reported.
			w1.Write([]byte("y"))
			set.remove(fd1)
			if n := set.ready(fds); slices.Contains(fds[:n], int32(fd1)) {
				t.Fatalf("a removed descriptor was reported: %v", fds[:n])
			}
		})
	}
}

// select cannot watch a descriptor at or past FD_SETSIZE: add says so
// instead of corrupting memory.
func TestSelectRefusesADescriptorPastItsLimit(t *testing.T) {
	set, err := newSelectSet()
	if err != nil {
		t.Fatal(err)
	}
	defer set.close()
	if err := set.add(4096); err == nil {
		t.Fatal("descriptor 4096 was accepted")
	} else {
		t.Log(err)
	}
}

// parseProcArgs reads a kern.procargs2 record as macOS lays it out.
func TestParseProcArgs(t *testing.T) {
	rec := make([]byte, 4)
	nativeEndian.PutUint32(rec, 3)
	rec = append(rec, "/usr/local/bin/node\x00\x00\x00\x00node\x00/opt/claude/cli.js\x00--resume\x00PATH=/usr/bin\x00"...)
	argv, ok := parseProcArgs(rec)
	if !ok || !slices.Equal(argv, []string{"node", "/opt/claude/cli.js", "--resume"}) {
		t.Fatalf("got %q, %v", argv, ok)
	}
	for _, bad := range [][]byte{nil, rec[:3], rec[:10], rec[:30]} {
		if argv, ok := parseProcArgs(bad); ok {
			t.Errorf("a cut record (%d bytes) parsed as %q", len(bad), argv)
		}
	}
}

// AGENTD_PORTABLE=1 is what makes Linux CI run macOS's readiness.
func TestPortableForcesSelect(t *testing.T) {
	t.Setenv(EnvPortable, "1")
	r, err := newReadiness()
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	if _, ok := r.(*selectSet); !ok {
		t.Fatalf("with %s=1 the readiness is %T, want select", EnvPortable, r)
	}
}
