// Locking: TryLock gives one process at a time the right to change a
// file. Two 3gs servers editing one registry (two stdio hosts started on
// the same file, say) would otherwise both report success while one's
// change silently replaced the other's.
//
// The lock is an advisory lock (flock) on a companion file, PATH.lock,
// not on PATH itself: writes replace PATH by renaming a new file over it,
// and a lock on the old file would not stop anyone. The kernel drops the
// lock when its holder exits, however it exits, so a crash never leaves a
// registry locked. The holder's process id is written into the lock file,
// only so the refusal can name who holds it.

package safefile

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Suffix names the lock file beside the file it guards.
const Suffix = ".lock"

// ErrHeld is wrapped by TryLock's error when another process holds the lock.
var ErrHeld = errors.New("held by another process")

// Lock is a held lock; Unlock releases it.
type Lock struct{ f *os.File }

// TryLock takes the lock on path without waiting. When another process
// holds it, the error wraps ErrHeld and names that process.
func TryLock(path string) (*Lock, error) {
	lockPath := path + Suffix
	// The lock file is cut and written (the holder's pid): a symbolic link
	// there is refused, or it would cut whatever file it names.
	f, err := OpenNoFollow(lockPath, "lock file", os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, ErrSymlink) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("opening the lock file: %w", err)
	}
	if err := lock(f); err != nil {
		holder := "another process"
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b[:n]))); perr == nil && pid > 0 {
			holder = "process " + strconv.Itoa(pid)
		}
		f.Close()
		if errors.Is(err, errWouldBlock) {
			return nil, fmt.Errorf("%s is locked by %s (%s): %w", path, holder, lockPath, ErrHeld)
		}
		return nil, fmt.Errorf("locking %s: %w", lockPath, err)
	}
	// Who holds it, for the message another process gets; best effort.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// Unlock releases the lock. The lock file stays: removing it would let a
// process that opened it a moment earlier lock a file no one else sees.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
