//go:build unix

package handover

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/agentd/agentd/cmd/agentd/internal/buildinfo"
)

// If the new code dies right after a handover (docs/upgrade.md). After the
// exec the daemon's process is the new binary: should it die, its PTYs
// would close, the agents would be hung up, and the keeper would end what
// was left. So before the exec, the code before starts a watchdog, this
// binary as `agentd handover-watch`, holding every descriptor of the
// handover (the socket, its lock, the keeper's pipe, each PTY, the
// handover file) at the same numbers. The watchdog is the daemon's child:
// while the daemon lives, its parent stays the same. Should the parent go
// within probation, the new code died; the watchdog then executes the code
// before on the same handover, with --handover-error saying what
// happened, and that daemon serves the sessions on (their agents are no
// longer its children: see sessions.awaitNotChild). Once probation has
// passed the watchdog exits; the new code, its parent, waits for that
// before it reports the upgrade settled (protocol.UpgradeRecord.Settling).
//
// Why a watchdog and not the old daemon kept beside the new one: the
// agents are the daemon process's children and their PTYs its
// descriptors; a process beside it can hold the descriptors, but only the
// process itself can stay the agents' parent, so the exec stays, and the
// watchdog only keeps what would otherwise be lost.

// probation is how long the code before watches the new code once it
// serves: what "right after" means. The new code adopts the sessions in
// milliseconds and its clients return within a second or two; a fault
// later than this is an ordinary daemon crash.
const probation = 3 * time.Second

// watchLimit bounds the watch when the new code never says it serves
// (its adoption is bounded well inside it).
const watchLimit = 2 * time.Minute

// watchHandover starts the watchdog over the descriptors keep and the
// handover file f, and records it in ho, written to f again. It returns
// the descriptor the new code says "serving" on, to keep across the exec,
// and stop, which ends the watchdog should the exec fail.
func watchHandover(f *os.File, ho *File, keep []int) (int, func(), error) {
	r, w, err := os.Pipe()
	if err != nil {
		return -1, nil, err
	}
	defer r.Close()
	pid, err := startWatch(slices.Concat(keep, []int{rawFD(r)}), rawFD(r), int(f.Fd()))
	if err != nil {
		w.Close()
		return -1, nil, fmt.Errorf("start the watchdog: %w", err)
	}
	stop := func() {
		w.Close()
		_ = syscall.Kill(pid, syscall.SIGKILL)
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, 0, nil)
	}
	ho.WatchPid, ho.Watch = pid, rawFD(w)
	if err := rewriteHandover(f, ho); err != nil {
		stop()
		return -1, nil, err
	}
	return ho.Watch, stop, nil
}

// startWatch starts `agentd handover-watch` holding each descriptor of
// keep at its own number, so the handover file names them right there too;
// every other number is closed in it. watch is the pipe it hears the new
// code on, handover the handover file.
func startWatch(keep []int, watch, handover int) (int, error) {
	self := selfBinary()
	top := 2
	for _, fd := range keep {
		top = max(top, fd)
	}
	files := make([]uintptr, top+1)
	for i := range files {
		files[i] = ^uintptr(0) // -1: closed
	}
	for _, fd := range append([]int{0, 1, 2}, keep...) {
		files[fd] = uintptr(fd)
	}
	argv := []string{self, "handover-watch", "--parent", strconv.Itoa(os.Getpid()),
		"--watch", strconv.Itoa(watch), "--handover", strconv.Itoa(handover)}
	return syscall.ForkExec(self, argv, &syscall.ProcAttr{Env: os.Environ(), Files: files,
		Sys: &syscall.SysProcAttr{Setsid: true}}) // signals to the daemon's group do not reach it
}

// Serving tells the watchdog of the handover ho that this code serves,
// and calls settled when it has ended: this code then keeps the sessions.
// standDown ends a watchdog still watching, for a daemon that ends as
// asked (agentd stop, idle) and must not be taken for one that died.
func Serving(ho *File, settled func()) (standDown func()) {
	if ho.WatchPid <= 0 || ho.WatchPid == os.Getpid() {
		return func() {} // no watchdog, or this process is the one that recovered
	}
	w := os.NewFile(uintptr(ho.Watch), "watch")
	_, _ = w.Write([]byte("serving\n"))
	w.Close()
	reaped := make(chan struct{})
	go func() {
		defer close(reaped)
		var ws syscall.WaitStatus
		for {
			if _, err := syscall.Wait4(ho.WatchPid, &ws, 0, nil); !errors.Is(err, syscall.EINTR) {
				break
			}
		}
		settled()
	}()
	return func() {
		select {
		case <-reaped:
		default:
			_ = syscall.Kill(ho.WatchPid, syscall.SIGKILL)
			<-reaped
		}
	}
}

// selfBinary is the file this process runs: on Linux the running image
// itself, which stays the code before even when a new binary was moved
// over its path.
func selfBinary() string {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe"
	}
	self, _ := os.Executable()
	return self
}

// Watch is the watchdog: it watches its parent, the daemon,
// until probation has passed since the new code said it serves, and
// takes the sessions back if the daemon's process goes first.
func Watch(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentd handover-watch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	parent := fs.Int("parent", 0, "the daemon's pid")
	watch := fs.Int("watch", -1, "the pipe the new code says \"serving\" on")
	handover := fs.Int("handover", -1, "the handover file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *watch < 0 || *handover < 0 || *parent <= 1 {
		fmt.Fprintln(stderr, "agentd handover-watch: internal (agentd upgrade): --parent, --watch and --handover are needed")
		return 2
	}
	heard := make(chan bool, 1) // true: "serving"; false: the pipe closed first
	go func() {
		var b [1]byte
		n, _ := os.NewFile(uintptr(*watch), "watch").Read(b[:])
		heard <- n > 0
	}()
	until := time.Now().Add(watchLimit)
	for os.Getppid() == *parent {
		select {
		case ok := <-heard:
			if ok {
				until = time.Now().Add(probation)
			} else {
				// Closed unsaid: the new code died (its parent goes
				// next) or the exec failed and the code before ended
				// this watch.
				until = time.Now().Add(time.Second)
			}
		default:
		}
		if time.Now().After(until) {
			return 0
		}
		time.Sleep(20 * time.Millisecond)
	}
	log := slog.New(slog.NewTextHandler(stderr, nil)).With("watchdog", os.Getpid())
	return recoverSessions(*handover, *parent, log)
}

// recoverSessions takes the sessions back after the new code died: this
// process becomes the code before, serving the handover it holds.
func recoverSessions(fd, parent int, log *slog.Logger) int {
	f := os.NewFile(uintptr(fd), "handover")
	var ho File
	_, err := f.Seek(0, io.SeekStart)
	if err == nil {
		err = json.NewDecoder(f).Decode(&ho)
	}
	if err != nil || ho.Server.Sessions == nil {
		log.Error("the new agentd died after a handover and its handover does not read; the keeper ends the sessions", "err", err)
		return 1
	}
	why := fmt.Errorf("the new agentd %s (pid %d) ended within %s of taking over the sessions (the daemon log may say why); agentd %s took them back in pid %d",
		ho.ToVersion, parent, probation, buildinfo.Version, os.Getpid())
	log.Error("the new code died after the handover; taking the sessions back", "to", ho.ToVersion, "sessions", len(ho.Server.Sessions.Sessions))
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		log.Error("cannot read the handover", "err", err)
		return 1
	}
	self := selfBinary()
	argv := append([]string{self, "serve"}, ho.Args...)
	argv = append(argv, "--resume-fd", strconv.Itoa(fd), "--handover-error", why.Error())
	err = execKeeping(self, argv, handoverFDs(&ho, fd))
	log.Error("cannot take the sessions back; the keeper ends them", "err", err)
	return 1
}
