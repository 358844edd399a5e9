package rpc

import "golang.org/x/sys/unix"

// peerCred reads the peer of a unix socket: its uid from LOCAL_PEERCRED
// (what getpeereid reads) and its pid from LOCAL_PEERPID. Only a Mac runs
// this.
func peerCred(fd int) (Peer, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return Peer{}, err
	}
	pid, err := unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	if err != nil {
		return Peer{}, err
	}
	return Peer{Uid: int(cred.Uid), Pid: pid}, nil
}
