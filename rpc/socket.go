package rpc

import (
	"net"
)

// The daemon's socket is private to its user (cmd/agentd/internal/daemonlink
// makes its folder 0700, the daemon's Listen the socket 0600), and the
// server checks every connection's peer uid in case a mode was loosened
// by hand.

// Peer is who is at the other end of a unix socket.
type Peer struct{ Uid, Pid int }

// PeerOf reads the peer's credentials of a unix connection (peerCred: per
// OS).
func PeerOf(c *net.UnixConn) (Peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var p Peer
	var credErr error
	if err := raw.Control(func(fd uintptr) { p, credErr = peerCred(int(fd)) }); err != nil {
		return Peer{}, err
	}
	return p, credErr
}
