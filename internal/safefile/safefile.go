// Package safefile is file safety in one place: it reads the files 3gs is
// pointed at with bounds and without following links, writes them
// atomically (write.go, append.go), and locks them against a second
// writer (lock.go).
//
// Reading: it reads the files 3gs is pointed at: registries, their
// signatures, tokens files and curator keys. Each is opened once, must be
// a regular file, and is read with a bound, so that `3gs validate
// /dev/zero` is refused instead of filling memory and a named pipe is
// refused instead of blocking the command forever.
package safefile

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is wrapped by the error for a path that is not a regular
// file: a directory, a device, a named pipe or a socket.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the error for a file over its limit.
var ErrTooLarge = errors.New("file too large")

// ErrSymlink is wrapped by the error of ReadNoFollow, OpenNoFollow and
// WriteNoFollow for a path that is a symbolic link.
var ErrSymlink = errors.New("symbolic link refused")

// Read returns the contents of the regular file at path, of at most limit
// bytes; what names the kind of file for the messages ("registry",
// "tokens file"). The file is opened without blocking (a named pipe with
// no writer would otherwise block the open itself), then checked through
// the open descriptor, so what is checked is what is read.
func Read(path string, limit int64, what string) ([]byte, error) {
	data, _, err := ReadStat(path, limit, what)
	return data, err
}

// Open opens the regular file at path, of at most limit bytes when it is
// opened, for a caller that reads it as a stream (an audit log); the
// caller still bounds what it reads, since the file may grow.
func Open(path string, limit int64, what string) (*os.File, fs.FileInfo, error) {
	return open(path, limit, what, 0)
}

func open(path string, limit int64, what string, flags int) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags|flags, 0)
	if err != nil {
		if flags&noFollow != 0 {
			if link := symlinkProblem(path, what); link != nil {
				return nil, nil, link
			}
		}
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &problem{fmt.Sprintf("%s is %s, not a regular file; give the path of the %s itself", path, kind(st.Mode()), what), ErrNotRegular}
	}
	if st.Size() > limit {
		f.Close()
		return nil, nil, &problem{fmt.Sprintf("%s is %d bytes, more than the %d-byte limit for a %s", path, st.Size(), limit, what), ErrTooLarge}
	}
	return f, st, nil
}

// ReadNoFollow is Read for a file that is 3gs's own (a peer's or an
// origin's cached copy): a symbolic link at path is refused, never
// followed (O_NOFOLLOW), so whoever can write the directory cannot make
// 3gs read another file through it. The error then wraps ErrSymlink and
// says what to do.
func ReadNoFollow(path string, limit int64, what string) ([]byte, error) {
	if link := symlinkProblem(path, what); link != nil {
		return nil, link
	}
	data, _, err := readStat(path, limit, what, noFollow)
	return data, err
}

// symlinkProblem is the refusal for a symbolic link at path, or nil when
// path is not one.
func symlinkProblem(path, what string) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	dest, _ := os.Readlink(path)
	return &problem{fmt.Sprintf("%s is a symbolic link (to %s), not the %s itself; refusing to follow it, since a link there would have 3gs read or overwrite another file. Remove the link; 3gs writes the file again", path, dest, what), ErrSymlink}
}

// ReadStat is Read that also returns the file's information, taken from
// the descriptor it read (for a caller that checks the file's mode).
func ReadStat(path string, limit int64, what string) ([]byte, fs.FileInfo, error) {
	return readStat(path, limit, what, 0)
}

func readStat(path string, limit int64, what string, flags int) ([]byte, fs.FileInfo, error) {
	f, st, err := open(path, limit, what, flags)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	// The file may grow between the stat and the read: read one byte past
	// the limit to tell. The buffer starts at the size the stat gave, one
	// byte more to see the end: io.ReadAll's doubling from 512 bytes held
	// twice a 150 MB registry at once, and spent half a second copying it.
	data, err := readAll(io.LimitReader(f, limit+1), min(st.Size(), limit)+1)
	if err != nil {
		return nil, nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(data)) > limit {
		return nil, nil, grewPast(path, limit, what)
	}
	return data, st, nil
}

// Digest is the SHA-256 of the regular file at path, of at most limit
// bytes, read as a stream: a caller that holds what the file should hold
// (a registry already loaded) learns whether it still does without a
// second copy of a 150 MB file in memory.
func Digest(path string, limit int64, what string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	f, _, err := open(path, limit, what, 0)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, limit+1))
	if err != nil {
		return sum, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if n > limit {
		return sum, grewPast(path, limit, what)
	}
	h.Sum(sum[:0])
	return sum, nil
}

// grewPast is the refusal of a file that grew past its limit while it
// was read, after its size passed the check at open.
func grewPast(path string, limit int64, what string) error {
	return &problem{fmt.Sprintf("%s grew past the %d-byte limit for a %s while it was read", path, limit, what), ErrTooLarge}
}

// readAll reads r to its end into a buffer of capacity size, grown only
// if r holds more.
func readAll(r io.Reader, size int64) ([]byte, error) {
	data := make([]byte, 0, size)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// problem is a refusal: its message names the path and what to do, and it
// unwraps to ErrNotRegular or ErrTooLarge.
type problem struct {
	msg  string
	kind error
}

func (p *problem) Error() string { return p.msg }
func (p *problem) Unwrap() error { return p.kind }

// kind names a file type that is not a regular file.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0, m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// OpenFlags are the flags to add to os.OpenFile when opening a path that
// must turn out to be a regular file, for writing as well as reading: on
// Unix, O_NONBLOCK, so that a named pipe cannot block the open.
const OpenFlags = openFlags

// OpenNoFollow opens path (os.OpenFile with flag and perm) for a file
// that is 3gs's own and never a link (the proposals file, an append-only
// log, a lock file): a symbolic link at path is refused, with an error
// that wraps ErrSymlink and names where it points, whether it is there
// before the open or is put there between the check and the open (on
// Unix, O_NOFOLLOW refuses it then; elsewhere the check before is the
// guard). Any other failure is os.OpenFile's error, for the caller to
// word.
func OpenNoFollow(path, what string, flag int, perm fs.FileMode) (*os.File, error) {
	if link := symlinkProblem(path, what); link != nil {
		return nil, link
	}
	f, err := os.OpenFile(path, flag|noFollow, perm)
	if err != nil {
		if link := symlinkProblem(path, what); link != nil {
			return nil, link
		}
		return nil, err
	}
	return f, nil
}
