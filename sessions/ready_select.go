//go:build linux || darwin

package sessions

import (
	"fmt"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// selectSet watches PTYs with select(2), the form that works on macOS and
// Linux alike. The wait is a blocking system call, so a parked pump holds
// one OS thread (one, not one a session). A pipe wakes it when the set or
// the deadline changes, since select, unlike an epoll set in Go's poller,
// cannot be told either while it waits.
type selectSet struct {
	mu       sync.Mutex
	fds      map[int]bool
	deadline time.Time
	waiting  bool // a wait is inside select: changes must wake it
	wakeR    int  // the wake pipe's ends, non-blocking
	wakeW    int
}

func newSelectSet() (*selectSet, error) {
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		return nil, fmt.Errorf("select: the wake pipe: %w", err)
	}
	for _, fd := range p {
		unix.CloseOnExec(fd)
		if err := unix.SetNonblock(fd, true); err != nil {
			unix.Close(p[0])
			unix.Close(p[1])
			return nil, fmt.Errorf("select: the wake pipe: %w", err)
		}
	}
	return &selectSet{fds: map[int]bool{}, wakeR: p[0], wakeW: p[1]}, nil
}

func (s *selectSet) add(fd int) error {
	if fd < 0 || fd >= unix.FD_SETSIZE {
		return fmt.Errorf("watching the PTY: its descriptor %d is past select's limit of %d open files", fd, unix.FD_SETSIZE)
	}
	s.mu.Lock()
	s.fds[fd] = true
	s.mu.Unlock()
	s.wake()
	return nil
}

func (s *selectSet) remove(fd int) {
	s.mu.Lock()
	delete(s.fds, fd)
	s.mu.Unlock()
	s.wake()
}

func (s *selectSet) arm(deadline time.Time) {
	s.mu.Lock()
	s.deadline = deadline
	s.mu.Unlock()
	s.wake()
}

// wake makes a wait inside select return. Outside a wait it does nothing:
// the next wait reads the set and the deadline afresh.
func (s *selectSet) wake() {
	s.mu.Lock()
	waiting := s.waiting
	s.mu.Unlock()
	if waiting {
		_, _ = unix.Write(s.wakeW, []byte{0}) // a full pipe already wakes it
	}
}

func (s *selectSet) close() {
	unix.Close(s.wakeR)
	unix.Close(s.wakeW)
}

func (s *selectSet) sleep(until time.Time) { time.Sleep(time.Until(until)) }

func (s *selectSet) ready(fds []int32) int { return s.do(false, fds) }

func (s *selectSet) wait(fds []int32) int { return s.do(true, fds) }

// do runs one select over the set and fills fds with the readable PTYs.
// A look (wait false) returns at once; a wait also watches the wake pipe
// and ends at the armed deadline. The set, the deadline and the waiting
// mark are read and set under one lock, so a change made after it wakes
// the select, and one made before it is in it.
func (s *selectSet) do(wait bool, fds []int32) int {
	var set unix.FdSet
	timeout := &unix.Timeval{}
	s.mu.Lock()
	top := -1
	for fd := range s.fds {
		set.Set(fd)
		top = max(top, fd)
	}
	if wait {
		timeout = nil
		if !s.deadline.IsZero() {
			tv := unix.NsecToTimeval(max(time.Until(s.deadline), 0).Nanoseconds())
			timeout = &tv
		}
		s.drainLocked()
		set.Set(s.wakeR)
		top = max(top, s.wakeR)
		s.waiting = true
	}
	s.mu.Unlock()
	if top < 0 {
		return 0
	}
	n, err := unix.Select(top+1, &set, nil, nil, timeout)
	if wait {
		s.mu.Lock()
		s.waiting = false
		s.drainLocked()
		s.mu.Unlock()
	}
	// EINTR, or EBADF for a PTY closed during the wait: the next call
	// builds the set afresh.
	if err != nil || n <= 0 {
		return 0
	}
	got := 0
	for fd := 0; fd <= top && got < len(fds); fd++ {
		if fd != s.wakeR && set.IsSet(fd) {
			fds[got] = int32(fd)
			got++
		}
	}
	return got
}

func (s *selectSet) drainLocked() {
	var b [64]byte
	for {
		if n, err := unix.Read(s.wakeR, b[:]); n <= 0 || err != nil {
			return
		}
	}
}

// selectWritable waits up to d for fd to take a write, with select(2).
func selectWritable(fd int, d time.Duration) error {
	if fd < 0 || fd >= unix.FD_SETSIZE {
		time.Sleep(d) // cannot be watched: look again after d
		return nil
	}
	var set unix.FdSet
	set.Set(fd)
	tv := unix.NsecToTimeval(d.Nanoseconds())
	_, err := unix.Select(fd+1, nil, &set, nil, &tv)
	return err
}
