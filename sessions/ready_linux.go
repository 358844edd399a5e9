package sessions

import (
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// platformReadiness on Linux is an epoll set, itself served by Go's poller:
// the pump blocks no thread while it waits.
func platformReadiness() (readiness, error) { return newEpollSet() }

// epollSet is a level-triggered epoll set of PTYs, with a timerfd in it
// for the pump's deadline.
//
// Why a timerfd and not Go's timers (a read deadline, time.Sleep): Go's
// poller sleeps in epoll_wait, whose timeout is in whole milliseconds, so
// a timer 3.7 ms away is a wake-up at 3 ms, then another 1 ms later: two
// wake-ups where one will do, and up to a millisecond late. The pump waits
// on its tick hundreds of times a second while agents draw, and each wait
// is a thread put to sleep and woken. A timerfd wakes once, within
// microseconds of its time.
type epollSet struct {
	epfd   int
	ep     *os.File // epfd, served by Go's poller
	rc     syscall.RawConn
	events []syscall.EpollEvent
	tfd    int      // the timerfd, in the set
	timer  *os.File // tfd, served by Go's poller too (sleep)
	timerC syscall.RawConn
}

func newEpollSet() (*epollSet, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	if err := syscall.SetNonblock(epfd, true); err != nil {
		syscall.Close(epfd)
		return nil, fmt.Errorf("epoll: %w", err)
	}
	ep := os.NewFile(uintptr(epfd), "epoll")
	rc, err := ep.SyscallConn()
	if err != nil {
		ep.Close()
		return nil, fmt.Errorf("epoll: %w", err)
	}
	e := &epollSet{epfd: epfd, ep: ep, rc: rc, events: make([]syscall.EpollEvent, pumpBatch), tfd: -1}
	if err := e.addTimer(); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

// addTimer makes the set's timerfd.
func (e *epollSet) addTimer() error {
	tfd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("epoll: timerfd: %w", err)
	}
	e.tfd = tfd
	e.timer = os.NewFile(uintptr(tfd), "timerfd")
	if e.timerC, err = e.timer.SyscallConn(); err != nil {
		return fmt.Errorf("epoll: timerfd: %w", err)
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(tfd)}
	if err := syscall.EpollCtl(e.epfd, syscall.EPOLL_CTL_ADD, tfd, &ev); err != nil {
		return fmt.Errorf("epoll: timerfd: %w", err)
	}
	return nil
}

func (e *epollSet) add(fd int) error {
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}
	if err := syscall.EpollCtl(e.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("watching the PTY: %w", err)
	}
	return nil
}

func (e *epollSet) remove(fd int) { _ = syscall.EpollCtl(e.epfd, syscall.EPOLL_CTL_DEL, fd, nil) }

// arm sets the timer: in the set, it ends a wait.
func (e *epollSet) arm(deadline time.Time) {
	var spec unix.ItimerSpec // zero: disarmed
	if !deadline.IsZero() {
		// A zero it_value disarms: a deadline already past is 1 ns away.
		spec.Value = unix.NsecToTimespec(max(time.Until(deadline), 1).Nanoseconds())
	}
	_ = unix.TimerfdSettime(e.tfd, 0, &spec, nil)
}

// sleep waits for the timer alone: output does not end it.
func (e *epollSet) sleep(until time.Time) {
	if time.Until(until) <= 0 {
		return
	}
	e.arm(until)
	_ = e.timerC.Read(func(tfd uintptr) bool { return takeExpiry(int(tfd)) })
}

// takeExpiry reads the timer's count of expiries, which empties it; it
// says whether the timer had expired.
func takeExpiry(tfd int) bool {
	var b [8]byte
	n, _ := unix.Read(tfd, b[:])
	return n == len(b)
}

func (e *epollSet) close() {
	e.ep.Close()
	if e.timer != nil {
		e.timer.Close()
	} else if e.tfd >= 0 {
		unix.Close(e.tfd)
	}
}

func (e *epollSet) ready(fds []int32) int {
	var n int
	_ = e.rc.Control(func(epfd uintptr) { n, _ = e.now(epfd, fds) })
	return n
}

func (e *epollSet) wait(fds []int32) int {
	var n int
	_ = e.rc.Read(func(epfd uintptr) bool {
		var expired bool
		n, expired = e.now(epfd, fds)
		return n > 0 || expired
	})
	return n
}

// now is epoll_wait that does not wait: a raw system call, as it cannot
// block. Only the pump calls it, so events is its own. It fills fds with
// the PTYs that can be read, and says whether the timer expired (it is
// emptied, so that it reads as ready only once an expiry).
func (e *epollSet) now(epfd uintptr, fds []int32) (n int, expired bool) {
	events := e.events[:min(len(fds), len(e.events))]
	for {
		r, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, epfd, uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return 0, false
		}
		for _, ev := range events[:r] {
			if int(ev.Fd) == e.tfd {
				expired = takeExpiry(e.tfd) || expired
				continue
			}
			fds[n] = ev.Fd
			n++
		}
		return n, expired
	}
}
