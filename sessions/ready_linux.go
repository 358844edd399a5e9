package sessions

import (
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// platformReadiness on Linux is a pair of epoll sets, one of them served
// by Go's poller: the pump blocks no thread while it waits.
func platformReadiness() (readiness, error) { return newEpollSet() }

// epollSet is a level-triggered epoll set of the PTYs (ptys), looked at
// only with waits that do not wait, and a second set (wake) that Go's
// poller serves, which the pump blocks on: it holds the timerfd of the
// pump's deadline, and the PTY set one-shot, armed only while the pump
// parks.
//
// Why two sets: Go's poller wakes one of the runtime's threads for every
// event of every descriptor it serves, whether or not a goroutine waits
// on it. With the PTY set in the poller, each write of each agent woke a
// thread while the pump slept to its next tick, to find nobody waiting:
// about 500 wake-ups a second at 50 sessions spinning at 10 Hz, more than
// the pump's own. One-shot, the PTY set wakes the pump once, when it
// parks, and nothing in between. (The PTYs themselves are kept out of the
// poller for the same reason: pollable.)
//
// Why a timerfd and not Go's timers (a read deadline, time.Sleep): Go's
// poller sleeps in epoll_wait, whose timeout is in whole milliseconds, so
// a timer 3.7 ms away is a wake-up at 3 ms, then another 1 ms later: two
// wake-ups where one will do, and up to a millisecond late. The pump waits
// on its tick hundreds of times a second while agents draw, and each wait
// is a thread put to sleep and woken. A timerfd wakes once, within
// microseconds of its time.
//
// Every call that cannot block is a raw system call: through the
// runtime's system call path, each woke its monitor thread from its deep
// sleep, which then napped 20 µs at a time for a while (about 700 naps a
// second at 50 spinning sessions).
type epollSet struct {
	ptys       int      // the PTYs' set, level-triggered; never in Go's poller
	wake       *os.File // the set the pump blocks on, served by Go's poller
	wfd        int      // wake's descriptor (its Fd would make it blocking)
	rc         syscall.RawConn
	tfd        int                  // the timerfd, in wake
	events     []syscall.EpollEvent // for ptys; only the pump uses it
	wakeEvents [2]syscall.EpollEvent
	ptysArmed  bool // ptys is armed in wake; only the pump's goroutine touches it
}

func newEpollSet() (*epollSet, error) {
	e := &epollSet{ptys: -1, tfd: -1, events: make([]syscall.EpollEvent, pumpBatch)}
	var err error
	if e.ptys, err = syscall.EpollCreate1(syscall.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	wfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		e.close()
		return nil, fmt.Errorf("epoll: %w", err)
	}
	if err := syscall.SetNonblock(wfd, true); err != nil {
		syscall.Close(wfd)
		e.close()
		return nil, fmt.Errorf("epoll: %w", err)
	}
	e.wake, e.wfd = os.NewFile(uintptr(wfd), "epoll"), wfd
	if e.rc, err = e.wake.SyscallConn(); err != nil {
		e.close()
		return nil, fmt.Errorf("epoll: %w", err)
	}
	if e.tfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC); err != nil {
		e.close()
		return nil, fmt.Errorf("epoll: timerfd: %w", err)
	}
	for _, ev := range []syscall.EpollEvent{
		{Events: syscall.EPOLLIN, Fd: int32(e.tfd)},
		{Events: 0, Fd: int32(e.ptys)}, // disarmed (armPTYs)
	} {
		if err := syscall.EpollCtl(wfd, syscall.EPOLL_CTL_ADD, int(ev.Fd), &ev); err != nil {
			e.close()
			return nil, fmt.Errorf("epoll: %w", err)
		}
	}
	return e, nil
}

func (e *epollSet) add(fd int) error {
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}
	if err := syscall.EpollCtl(e.ptys, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("watching the PTY: %w", err)
	}
	return nil
}

func (e *epollSet) remove(fd int) { _ = syscall.EpollCtl(e.ptys, syscall.EPOLL_CTL_DEL, fd, nil) }

// arm sets the timer: in the wake set, it ends a wait.
func (e *epollSet) arm(deadline time.Time) {
	var spec unix.ItimerSpec // zero: disarmed
	if !deadline.IsZero() {
		// A zero it_value disarms: a deadline already past is 1 ns away.
		spec.Value = unix.NsecToTimespec(max(time.Until(deadline), 1).Nanoseconds())
	}
	_, _, _ = syscall.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(e.tfd), 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
}

// sleep waits for the timer alone: output does not end it.
func (e *epollSet) sleep(until time.Time) {
	if time.Until(until) <= 0 {
		return
	}
	e.arm(until)
	e.armPTYs(false)
	_ = e.rc.Read(func(uintptr) bool {
		_, expired := e.woken()
		return expired
	})
}

func (e *epollSet) ready(fds []int32) int {
	events := e.events[:min(len(fds), len(e.events))]
	r := epollNow(e.ptys, events)
	for i, ev := range events[:r] {
		fds[i] = ev.Fd
	}
	return r
}

func (e *epollSet) wait(fds []int32) int {
	var n int
	_ = e.rc.Read(func(uintptr) bool {
		for {
			e.armPTYs(true)
			ptys, expired := e.woken()
			if ptys {
				if n = e.ready(fds); n == 0 {
					continue // gone again before it was read: wait on
				}
			}
			return n > 0 || expired
		}
	})
	return n
}

// armPTYs arms or disarms the PTY set in the wake set. Armed, it is
// one-shot: the first output wakes the pump, and disarms it (woken).
func (e *epollSet) armPTYs(on bool) {
	if e.ptysArmed == on {
		return
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLONESHOT, Fd: int32(e.ptys)}
	if on {
		ev.Events |= syscall.EPOLLIN
	}
	_, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_CTL, uintptr(e.wfd), syscall.EPOLL_CTL_MOD, uintptr(e.ptys), uintptr(unsafe.Pointer(&ev)), 0, 0)
	if errno == 0 {
		e.ptysArmed = on
	}
}

// woken takes what the wake set has, without waiting: whether the PTY
// set fired (which disarmed it) and whether the timer expired (which is
// emptied, so that it reads as ready only once an expiry).
func (e *epollSet) woken() (ptys, expired bool) {
	r := epollNow(e.wfd, e.wakeEvents[:])
	for _, ev := range e.wakeEvents[:r] {
		switch int(ev.Fd) {
		case e.tfd:
			expired = takeExpiry(e.tfd) || expired
		case e.ptys:
			ptys, e.ptysArmed = true, false
		}
	}
	return ptys, expired
}

// epollNow is epoll_wait that does not wait.
func epollNow(epfd int, events []syscall.EpollEvent) int {
	for {
		r, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
		switch errno {
		case 0:
			return int(r)
		case syscall.EINTR:
			continue
		default:
			return 0
		}
	}
}

// takeExpiry reads the timer's count of expiries, which empties it; it
// says whether the timer had expired.
func takeExpiry(tfd int) bool {
	var b [8]byte
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(tfd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return errno == 0 && n == uintptr(len(b))
}

func (e *epollSet) close() {
	if e.wake != nil {
		e.wake.Close()
	}
	if e.tfd >= 0 {
		unix.Close(e.tfd)
	}
	if e.ptys >= 0 {
		unix.Close(e.ptys)
	}
}
