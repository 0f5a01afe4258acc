//go:build !unix

package safefile

// openFlags: systems other than Unix have no named pipes in the file
// system to block on.
const openFlags = 0
