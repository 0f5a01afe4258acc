//go:build unix

package safefile

import "syscall"

// openFlags: O_NONBLOCK makes opening a named pipe return at once instead
// of waiting for a writer; it changes nothing for a regular file.
const openFlags = syscall.O_NONBLOCK

// noFollow makes the open fail when the last element of the path is a
// symbolic link.
const noFollow = syscall.O_NOFOLLOW
