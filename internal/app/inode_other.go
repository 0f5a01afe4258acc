//go:build !unix

package app

import "io/fs"

// inode is 0 where the system does not say: size and modification time
// alone tell a change.
func inode(fs.FileInfo) uint64 { return 0 }

// ownedByUs cannot tell here; the socket's place and mode are the guard.
func ownedByUs(fs.FileInfo) bool { return true }
