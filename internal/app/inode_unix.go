//go:build unix

package app

import (
	"io/fs"
	"os"
	"syscall"
)

// inode is fi's inode number: a file replaced by a rename has another,
// even at the same size and modification time.
func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// ownedByUs reports whether fi's file belongs to this process's user.
func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
