package rpc

import (
	"golang.org/x/sys/unix"
)

// peerCred reads the peer of a unix socket (SO_PEERCRED).
func peerCred(fd int) (Peer, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return Peer{}, err
	}
	return Peer{Uid: int(cred.Uid), Pid: int(cred.Pid)}, nil
}
