package sessions

// awaitExit returns at once on macOS: exec.Cmd.Wait waits in wait4, which
// holds an OS thread a session. (kqueue's EVFILT_PROC could park it in Go's
// poller as a pidfd does on Linux; at the tens of sessions a person runs,
// a thread each is not worth code no Linux CI can run.)
func awaitExit(int) {}
