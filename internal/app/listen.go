package app

import (
	"errors"
	"os"
	"syscall"
)

// ListenFix is the advice for an address that could not be bound. Only a
// port in use means another program holds it.
func ListenFix(err error) string {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return "choose another port with --http (THREEGS_HTTP), or stop the other server listening there (perhaps another 3gs)"
	case errors.Is(err, syscall.EACCES), errors.Is(err, os.ErrPermission):
		return "ports below 1024 need privileges; use a higher port, behind a reverse proxy if it must be 80 or 443"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return "the host is not an address of this machine; use one it has, such as 127.0.0.1, or :PORT for every interface"
	}
	return "check the host in --http (THREEGS_HTTP): it must be a name or an address of this machine"
}
