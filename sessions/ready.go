package sessions

import "time"

// readiness tells the pump which PTYs have output to read. Linux uses
// epoll, with one set that Go's own poller serves (ready_linux.go);
// macOS, and Linux with AGENTD_PORTABLE=1, use select(2)
// (ready_select.go). Why select on
// macOS: poll(2) there does not support devices, and a PTY is one; kqueue
// takes PTY masters on current releases but not every device, and no Linux
// machine can run it, while select works on both and so is tested by Linux
// CI. Its limit, descriptors below FD_SETSIZE (1024), is checked by add.
//
// Methods other than wait and ready are called with the pump's mu held.
type readiness interface {
	// add starts watching fd, a non-blocking descriptor.
	add(fd int) error
	// remove stops watching fd before it is closed.
	remove(fd int)
	// ready fills fds with descriptors that can be read now, without
	// waiting, and returns how many it filled.
	ready(fds []int32) int
	// arm sets when the wait under way, or the next one, returns at the
	// latest: zero means no limit. It may move the limit earlier.
	arm(deadline time.Time)
	// sleep blocks until until, whatever the descriptors do: the pump's
	// wait for its next tick while output streams. It may end early, if
	// the deadline is armed earlier meanwhile.
	sleep(until time.Time)
	// wait blocks until a descriptor can be read or the armed deadline
	// passes, then fills fds as ready does. It may return 0 early.
	wait(fds []int32) int
	close()
}

// newReadiness makes the readiness this platform uses.
func newReadiness() (readiness, error) {
	if Portable() {
		return newSelectSet()
	}
	return platformReadiness()
}
