package sessions

import (
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// ptyMaster is a PTY's master side as a bare non-blocking descriptor, not
// an *os.File. Why: a non-blocking *os.File is served by Go's poller,
// which wakes one of the runtime's threads for every write of the agent,
// though nothing waits on it there: the pump reads the descriptor through
// its own readiness set (ready.go). At 50 sessions spinning at 10 Hz those
// wake-ups were about 500 a second, more than the pump's own.
//
// Each use holds mu shared and Close holds it alone, so the descriptor is
// never closed (and its number given to another file) under a use.
type ptyMaster struct {
	mu      sync.RWMutex
	fd      int // -1 once closed
	closing atomic.Bool
}

// newPTYMaster takes the descriptor fd, which it makes non-blocking.
func newPTYMaster(fd int) (*ptyMaster, error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	return &ptyMaster{fd: fd}, nil
}

// control runs f with the descriptor, which stays open until f returns.
func (m *ptyMaster) control(f func(fd int) error) error {
	if m == nil {
		return os.ErrClosed
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.fd < 0 {
		return os.ErrClosed
	}
	return f(m.fd)
}

// writeWait is how long one wait for room in a full input buffer lasts
// before Close is looked for again.
const writeWait = 100 * time.Millisecond

// Write writes b whole. An agent that does not read its input as fast as
// it comes (a long paste) fills the PTY's buffer: that is waited out
// (waitWritable), not spun on, and Close ends the wait.
func (m *ptyMaster) Write(b []byte) (int, error) {
	done := 0
	err := m.control(func(fd int) error {
		for done < len(b) {
			n, err := unix.Write(fd, b[done:])
			if n > 0 {
				done += n
			}
			switch err {
			case nil, unix.EINTR:
			case unix.EAGAIN:
				if m.closing.Load() {
					return os.ErrClosed
				}
				if err := waitWritable(fd, writeWait); err != nil && err != unix.EINTR {
					return err
				}
			default:
				return err
			}
		}
		return nil
	})
	return done, err
}

// Close closes the descriptor once the uses under way end; a write
// waiting for room gives up within writeWait.
func (m *ptyMaster) Close() error {
	if m == nil {
		return nil
	}
	m.closing.Store(true)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fd < 0 {
		return nil
	}
	err := unix.Close(m.fd)
	m.fd = -1
	return err
}
