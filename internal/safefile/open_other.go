//go:build !unix

package safefile

// openFlags: systems other than Unix have no named pipes in the file
// system to block on.
const openFlags = 0

// noFollow: elsewhere the Lstat ReadNoFollow makes first is the check.
const noFollow = 0
