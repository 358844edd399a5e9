package rpc

import (
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// userRunDir is the user's own run folder, made by logind.
func userRunDir(uid int) string { return filepath.Join("/run/user", strconv.Itoa(uid)) }

// peerCred reads the peer of a unix socket (SO_PEERCRED).
func peerCred(fd int) (Peer, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return Peer{}, err
	}
	return Peer{Uid: int(cred.Uid), Pid: int(cred.Pid)}, nil
}
