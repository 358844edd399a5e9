package main

import "golang.org/x/sys/unix"

// bytesToRead is the ioctl that tells how many bytes a pipe holds unread.
const bytesToRead = unix.TIOCINQ
