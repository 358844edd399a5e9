//go:build unix

// Package handover is the daemon's side of agentd upgrade (docs/upgrade.md). The daemon
// re-executes itself as the new binary: the same process, so every agent
// stays its child with the same pid, and the socket, its lock, the keeper's
// pipe and each PTY pass across the exec as open descriptors, named in a
// handover file the new code reads. Why not a new process beside the old
// one: the agents are the old process's children and their PTYs its
// descriptors; passing them to a stranger would need SCM_RIGHTS for every
// PTY and would leave the agents reparented to init, waited on by nobody.
//
// What makes it safe:
//   - the new binary is checked before anything stops: owned by this user,
//     writable by nobody else, it runs `version --json`, speaks a handover
//     format this daemon writes, and is not older;
//   - the new binary reads a handover of the sessions as they are (`serve
//     --handover-check`) and says it can adopt it, while they run on: a
//     check that hangs or crashes costs its bound (checkLimit) and freezes
//     nothing, and its whole process group is ended;
//   - only then are the sessions frozen (sessions.Manager.Freeze), for the
//     exec alone: when they changed meanwhile in a way the check judges (a
//     session started or ended), they are thawed and checked again; any
//     failure until the exec thaws them and the daemon serves on;
//   - a new binary that fails to take over after the exec executes the old
//     one again with the same handover (--handover-error says why), so the
//     sessions come back under the code they left.
package handover

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentd/agentd/cmd/agentd/internal/buildinfo"
	"github.com/agentd/agentd/cmd/agentd/internal/keeper"
	"github.com/agentd/agentd/cmd/agentd/internal/rules"
	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/rpc/protocol"
	"github.com/agentd/agentd/sessions"
)

// File is what passes across the exec, beside the descriptors.
type File struct {
	Format      int    `json:"format"`
	FromVersion string `json:"fromVersion"`
	FromBinary  string `json:"fromBinary"`
	// FromImage, when set, is a descriptor open on the running image of
	// the code before (Linux): the one a hand-back executes, as FromBinary
	// may name the new binary by then (moved over the old one's path).
	FromImage int    `json:"fromImage,omitempty"`
	ToVersion string `json:"toVersion"`
	At        string `json:"at"`
	// Descriptors open across the exec.
	Listener  int `json:"listener"`
	Lock      int `json:"lock"`
	Keeper    int `json:"keeper"` // -1: none
	KeeperPid int `json:"keeperPid"`
	// The watchdog (watch.go), when WatchPid is set: Watch is the
	// pipe the new code tells it "serving" on.
	WatchPid int `json:"watchPid,omitempty"`
	Watch    int `json:"watch,omitempty"`
	// Args are the daemon's own flags, for the code that comes next.
	Args   []string           `json:"args"`
	Server rpc.ServerSnapshot `json:"server"`
}

// DaemonFiles are the descriptors a daemon holds for its whole life.
type DaemonFiles struct {
	Ln     *net.UnixListener
	Handed *os.File // after a handover: the descriptor Ln was made from
	Lock   *os.File
	Keeper *keeper.Pipe
	Args   []string // the serve flags, without --resume-fd and --handover-error
}

// newBinary is a candidate for taking over, as checked.
type newBinary struct {
	path string
	info buildinfo.Info
}

// checkNewBinary says whether path may take over from this daemon.
func checkNewBinary(path string, auto bool) (newBinary, error) {
	if !filepath.IsAbs(path) {
		return newBinary{}, fmt.Errorf("%q is not an absolute path", path)
	}
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newBinary{}, fmt.Errorf("%s: no such file", path)
	} else if err != nil {
		return newBinary{}, err
	}
	st, err := os.Stat(real)
	if err != nil {
		return newBinary{}, err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	switch {
	case !st.Mode().IsRegular() || st.Mode()&0o111 == 0:
		return newBinary{}, fmt.Errorf("%s is not an executable file", real)
	case !ok || int(sys.Uid) != os.Getuid():
		return newBinary{}, fmt.Errorf("%s is not owned by uid %d: only a binary this user owns may take over the sessions", real, os.Getuid())
	case st.Mode().Perm()&0o022 != 0:
		return newBinary{}, fmt.Errorf("%s is writable by others (mode %v): only a binary nobody else can change may take over the sessions", real, st.Mode().Perm())
	}
	var out, stderr bytes.Buffer
	cmd := exec.Command(real, "version", "--json")
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := runBounded(cmd, checkLimit); err != nil {
		return newBinary{}, fmt.Errorf("the new agentd %s did not start (`version --json`: %v%s)", real, err, tail(stderr.String()))
	}
	var info buildinfo.Info
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &info); err != nil || info.Version == "" {
		return newBinary{}, fmt.Errorf("%s is not an agentd: `version --json` printed %q", real, tail(out.String()))
	}
	nb := newBinary{path: real, info: info}
	switch {
	case info.Handover < buildinfo.HandoverFormat:
		return nb, fmt.Errorf("agentd %s (%s) cannot take over sessions (it reads handover format %d, this daemon writes %d)", info.Version, real, info.Handover, buildinfo.HandoverFormat)
	case info.OS != buildinfo.Current().OS || info.Arch != buildinfo.Current().Arch:
		return nb, fmt.Errorf("%s is built for %s/%s", real, info.OS, info.Arch)
	}
	order := protocol.CompareVersions(info.Version, buildinfo.Version)
	switch {
	case order < 0:
		return nb, fmt.Errorf("agentd %s (%s) is older than this daemon's %s: a daemon never hands over to an older binary", info.Version, real, buildinfo.Version)
	case auto && order == 0:
		return nb, fmt.Errorf("agentd %s is not newer than this daemon's %s", info.Version, buildinfo.Version)
	case auto && info.Protocol != protocol.ProtocolVersion:
		return nb, fmt.Errorf("agentd %s speaks protocol %d and this daemon's clients %d: run agentd upgrade to switch by hand", info.Version, info.Protocol, protocol.ProtocolVersion)
	}
	return nb, nil
}

// Upgrade hands the daemon's sessions to the binary p names. It returns
// only when the handover did not happen; every session then runs on.
func Upgrade(srv *rpc.Server, files *DaemonFiles, log *slog.Logger, p protocol.UpgradeParams) error {
	if !upgrading.TryLock() {
		return errors.New("another upgrade is under way")
	}
	defer upgrading.Unlock()
	nb, err := checkNewBinary(p.Binary, p.Auto)
	if err != nil {
		return err
	}
	var checked *sessions.Snapshot // what the new binary said it can adopt
	for attempt := 1; ; attempt++ {
		snap, _, thaw, err := srv.Freeze()
		if err != nil {
			return err
		}
		frozen := time.Now()
		ho := newHandover(files, nb, snap, frozen)
		if checked != nil && sessions.SameToCheck(checked, snap.Sessions) {
			err := handOver(files, log, nb, &ho, frozen)
			thaw() // reached only when the exec failed
			return err
		}
		thaw()
		if attempt > 3 {
			return errors.New("the sessions kept starting or ending while the new binary checked them; try again")
		}
		if err := checkAdopts(files, nb, &ho); err != nil {
			return err
		}
		checked = snap.Sessions
	}
}

// upgrading is held while a handover is checked and made: one at a time.
var upgrading sync.Mutex

// checkLimit bounds each run of the new binary before a handover
// (`version --json`, `serve --handover-check`); both take well under a
// second.
const checkLimit = 15 * time.Second

// newHandover describes the frozen sessions snap for the new binary.
func newHandover(files *DaemonFiles, nb newBinary, snap rpc.ServerSnapshot, frozen time.Time) File {
	self, _ := os.Executable()
	ho := File{Format: buildinfo.HandoverFormat, FromVersion: buildinfo.Version, FromBinary: self, ToVersion: nb.info.Version,
		At: frozen.UTC().Format(time.RFC3339Nano), Listener: rawFD(files.Ln), Lock: int(files.Lock.Fd()),
		Keeper: -1, Args: files.Args, Server: snap}
	if files.Keeper != nil {
		ho.Keeper, ho.KeeperPid = rawFD(files.Keeper.File()), files.Keeper.Pid()
	}
	return ho
}

// checkAdopts has the new binary read ho and say it can adopt it, while
// the sessions run on.
func checkAdopts(files *DaemonFiles, nb newBinary, ho *File) error {
	f, err := writeHandover(filepath.Dir(files.Ln.Addr().String()), ho)
	if err != nil {
		return err
	}
	defer f.Close()
	return precheck(nb.path, f)
}

// handOver executes the new binary with ho, the sessions frozen since
// frozen. It returns only when the exec failed.
func handOver(files *DaemonFiles, log *slog.Logger, nb newBinary, ho *File, frozen time.Time) error {
	if img, err := os.Open("/proc/self/exe"); err == nil {
		defer img.Close()
		ho.FromImage = int(img.Fd())
	}
	f, err := writeHandover(filepath.Dir(files.Ln.Addr().String()), ho)
	if err != nil {
		return err
	}
	defer f.Close()
	keep := handoverFDs(ho, int(f.Fd()))
	watch, stopWatch, err := watchHandover(f, ho, keep)
	if err != nil {
		return err
	}
	argv := append([]string{nb.path, "serve"}, files.Args...)
	argv = append(argv, "--resume-fd", strconv.Itoa(int(f.Fd())))
	log.Info("handing over", "to", nb.path, "version", nb.info.Version, "sessions", len(ho.Server.Sessions.Sessions),
		"watchdog", ho.WatchPid, "frozen_for", time.Since(frozen).String())
	err = execKeeping(nb.path, argv, append(keep, watch))
	stopWatch()
	return fmt.Errorf("exec %s: %w", nb.path, err)
}

// execKeeping replaces this process with path, keeping fds open across
// the exec. It returns only on failure, with fds closed on exec again.
func execKeeping(path string, argv []string, fds []int) error {
	for _, fd := range fds {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			return fmt.Errorf("descriptor %d: %w", fd, err)
		}
	}
	err := syscall.Exec(path, argv, os.Environ())
	for _, fd := range fds {
		syscall.CloseOnExec(fd)
	}
	return err
}

// writeHandover writes ho to a file nobody else can open (made and
// unlinked at once in the daemon's private folder), read from its start.
func writeHandover(dir string, ho *File) (*os.File, error) {
	f, err := os.CreateTemp(dir, "handover-*.json")
	if err != nil {
		return nil, err
	}
	_ = os.Remove(f.Name())
	if err := json.NewEncoder(f).Encode(ho); err != nil {
		f.Close()
		return nil, fmt.Errorf("write the handover: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// precheck runs the new binary on the handover it is about to get: it
// must read it and say it can adopt every session, before anything is
// given up.
func precheck(path string, f *os.File) error {
	defer f.Seek(0, io.SeekStart)
	var out bytes.Buffer
	cmd := exec.Command(path, "serve", "--handover-check")
	cmd.Stdin = f
	cmd.Stdout, cmd.Stderr = &out, &out
	err := runBounded(cmd, checkLimit)
	switch {
	case err != nil:
		return fmt.Errorf("the new agentd %s cannot take over (`serve --handover-check`: %v%s)", path, err, tail(out.String()))
	case strings.TrimSpace(out.String()) != "ok":
		return fmt.Errorf("the new agentd %s cannot take over (`serve --handover-check` printed %q, not ok)", path, tail(out.String()))
	}
	return nil
}

// runBounded runs cmd in a process group of its own and ends the whole
// group when cmd fails or outlives limit: a new binary that hangs, or
// leaves a child behind, costs the bound and nothing more.
func runBounded(cmd *exec.Cmd, limit time.Duration) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = time.Second // a child left holding the output pipes
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		return err
	case <-time.After(limit):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return fmt.Errorf("no answer within %s; ended it and all it started", limit)
	}
}

// Check is `agentd serve --handover-check`: read a handover on
// stdin and say "ok" when this binary can adopt it.
func Check(stdin io.Reader, stdout, stderr io.Writer) int {
	var ho File
	if err := json.NewDecoder(stdin).Decode(&ho); err != nil {
		fmt.Fprintf(stderr, "the handover does not read: %v\n", err)
		return 1
	}
	if err := checkHandover(&ho); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintln(stdout, "ok")
	return 0
}

func checkHandover(ho *File) error {
	if ho.Format < 1 || ho.Format > buildinfo.HandoverFormat {
		return fmt.Errorf("handover format %d: this agentd reads 1 to %d", ho.Format, buildinfo.HandoverFormat)
	}
	if ho.Server.Sessions == nil {
		return errors.New("the handover carries no sessions")
	}
	rules, _ := rules.Load()
	return sessions.CheckSnapshot(rules, ho.Server.Sessions)
}

// Read reads the handover file the daemon before passed on fd.
func Read(fd int) (*File, *os.File, error) {
	f := os.NewFile(uintptr(fd), "handover")
	if f == nil {
		return nil, nil, fmt.Errorf("--resume-fd %d is not open", fd)
	}
	syscall.CloseOnExec(fd)
	var ho File
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, f, err
	}
	if err := json.NewDecoder(f).Decode(&ho); err != nil {
		return nil, f, fmt.Errorf("the handover does not read: %w", err)
	}
	if ho.WatchPid > 0 && ho.WatchPid != os.Getpid() {
		syscall.CloseOnExec(ho.Watch) // not for the agents this code starts
	}
	if ho.FromImage > 0 {
		syscall.CloseOnExec(ho.FromImage)
	}
	return &ho, f, checkHandover(&ho)
}

// HandBack is what a new binary does when it cannot take over after the
// exec: it executes the binary it came from with the same handover, and
// that one's daemon says why in lastUpgrade. Only when that fails too do
// the sessions end (the keeper ends them as this process exits).
func HandBack(ho *File, f *os.File, why error, log *slog.Logger) error {
	log.Error("cannot take over; handing the sessions back", "to", ho.FromBinary, "err", why)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	keep := handoverFDs(ho, int(f.Fd()))
	if ho.WatchPid > 0 {
		keep = append(keep, ho.Watch) // the code handed back to says "serving" on it
	}
	from := ho.FromBinary
	if ho.FromImage > 0 {
		from = "/proc/self/fd/" + strconv.Itoa(ho.FromImage)
	}
	argv := append([]string{ho.FromBinary, "serve"}, ho.Args...)
	argv = append(argv, "--resume-fd", strconv.Itoa(int(f.Fd())), "--handover-error", why.Error())
	return execKeeping(from, argv, keep)
}

// handoverFDs are the descriptors the handover ho names, with the
// handover file's own, fd: what must stay open across an exec.
func handoverFDs(ho *File, fd int) []int {
	keep := []int{ho.Listener, ho.Lock, fd}
	if ho.FromImage > 0 {
		keep = append(keep, ho.FromImage)
	}
	if ho.Keeper >= 0 {
		keep = append(keep, ho.Keeper)
	}
	for _, ss := range ho.Server.Sessions.Sessions {
		if ss.FD >= 0 {
			keep = append(keep, ss.FD)
		}
	}
	return keep
}

// rewriteHandover writes ho to f again, from its start.
func rewriteHandover(f *os.File, ho *File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := json.NewEncoder(f).Encode(ho); err != nil {
		return fmt.Errorf("write the handover: %w", err)
	}
	_, err := f.Seek(0, io.SeekStart)
	return err
}

// rawFD is the descriptor under a listener, without Fd's switch to
// blocking mode.
func rawFD(c syscall.Conn) int {
	rc, err := c.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	_ = rc.Control(func(u uintptr) { fd = int(u) })
	return fd
}

// tail is the end of a command's output, for an error message.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if len(s) > 400 {
		s = "…" + s[len(s)-400:]
	}
	return ": " + s
}

// Adopt adopts the handover's sessions; a panic in that is an
// error, so the sessions can still be handed back.
func Adopt(srv *rpc.Server, snap rpc.ServerSnapshot, rec protocol.UpgradeRecord) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error while adopting the sessions: %v", p)
		}
	}()
	if e := os.Getenv(EnvFault); e != "" && rec.Error == "" {
		return fmt.Errorf("%s=%s: a fault asked for by a test", EnvFault, e)
	}
	return srv.Adopt(snap, rec)
}

// EnvFault, for tests of the hand-back only, makes the new code
// fail to adopt the sessions after the exec.
const EnvFault = "AGENTD_TEST_HANDOVER_FAULT"

// Listener is the socket the daemon before listened on. The
// descriptor itself stays open (net.FileListener serves a copy): should
// this code hand the sessions back, it passes that number on.
//
// The file is returned to be kept: its finalizer would close the
// descriptor.
func Listener(fd int) (*net.UnixListener, *os.File, error) {
	syscall.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "listener")
	l, err := net.FileListener(f)
	if err != nil {
		return nil, f, fmt.Errorf("the socket's descriptor %d: %w", fd, err)
	}
	ul, ok := l.(*net.UnixListener)
	if !ok {
		l.Close()
		return nil, f, fmt.Errorf("descriptor %d is not a unix socket", fd)
	}
	ul.SetUnlinkOnClose(false) // the path is removed by serve's own defer
	return ul, f, nil
}
