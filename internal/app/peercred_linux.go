//go:build linux

package app

import (
	"net"
	"os"
	"syscall"
)

// peerIsUs reports whether the process at the other end of c, a Unix
// socket connection, runs as this process's user (SO_PEERCRED): the
// socket's mode is one guard, this the second.
func peerIsUs(c net.Conn) bool {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil || credErr != nil {
		return false
	}
	return int(cred.Uid) == os.Getuid()
}
