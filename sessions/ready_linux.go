package sessions

import (
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// platformReadiness on Linux is an epoll set, itself served by Go's poller:
// the pump blocks no thread while it waits.
func platformReadiness() (readiness, error) { return newEpollSet() }

// epollSet is a level-triggered epoll set of PTYs.
type epollSet struct {
	epfd   int
	ep     *os.File // epfd, served by Go's poller
	rc     syscall.RawConn
	events []syscall.EpollEvent
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
	return &epollSet{epfd: epfd, ep: ep, rc: rc, events: make([]syscall.EpollEvent, pumpBatch)}, nil
}

func (e *epollSet) add(fd int) error {
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}
	if err := syscall.EpollCtl(e.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("watching the PTY: %w", err)
	}
	return nil
}

func (e *epollSet) remove(fd int) { _ = syscall.EpollCtl(e.epfd, syscall.EPOLL_CTL_DEL, fd, nil) }

func (e *epollSet) arm(deadline time.Time) { _ = e.ep.SetReadDeadline(deadline) }

func (e *epollSet) close() { e.ep.Close() }

func (e *epollSet) ready(fds []int32) int {
	var n int
	_ = e.rc.Control(func(epfd uintptr) { n = e.now(epfd, fds) })
	return n
}

func (e *epollSet) wait(fds []int32) int {
	var n int
	_ = e.rc.Read(func(epfd uintptr) bool {
		n = e.now(epfd, fds)
		return n > 0
	})
	return n
}

// now is epoll_wait that does not wait: a raw system call, as it cannot
// block. Only the pump calls it, so events is its own.
func (e *epollSet) now(epfd uintptr, fds []int32) int {
	events := e.events[:min(len(fds), len(e.events))]
	for {
		r, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, epfd, uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return 0
		}
		for i := range int(r) {
			fds[i] = events[i].Fd
		}
		return int(r)
	}
}
