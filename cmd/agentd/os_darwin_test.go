package main

// bytesToRead is the ioctl that tells how many bytes a pipe holds unread:
// FIONREAD, _IOR('f', 127, int), which x/sys/unix does not name for macOS.
const bytesToRead = 0x4004667f
