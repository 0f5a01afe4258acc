//go:build !linux

package execfile

import (
	"errors"
	"unsafe"
)

// Here the executable is not read as a file: Open returns nil.
func open(addr uintptr, n int) *Region { return nil }

func pread(fd int, b []byte, off int64) bool { return false }

var errUnsupported = errors.New("execfile: not on this system")

// Release is not supported here.
func Release(p unsafe.Pointer, n int) error { return errUnsupported }

// Resident is not supported here.
func Resident(p unsafe.Pointer, n int) (int, error) { return 0, errUnsupported }

func expected() bool { return false }
