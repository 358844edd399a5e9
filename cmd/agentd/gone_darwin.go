package main

import "time"

// pidfdGone: macOS has no pidfd; processGone polls.
func pidfdGone(int, time.Duration) (gone, ok bool) { return false, false }
