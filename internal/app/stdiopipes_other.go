//go:build !linux

package app

import "io"

// stdioPipes serves stdin and stdout as they are; see the Linux version.
func stdioPipes(in io.Reader, out io.Writer) (io.Reader, io.Writer, func()) {
	return in, out, func() {}
}
