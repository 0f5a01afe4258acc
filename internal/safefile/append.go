package safefile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrNotAsLeft is wrapped by AppendAt's error when the file is not the
// length its caller left it at: another program wrote or cut it.
var ErrNotAsLeft = errors.New("another program wrote or cut it")

// AppendAt appends what fill writes to the append-only file at path
// (created when missing), which must be a regular file want bytes long,
// and syncs it: the audit log and the proposals file grow this way. A
// write or sync that fails part way is cut back to want bytes, so the
// file holds only whole records whatever happens short of a crash. A new
// file's directory is synced too, or a crash could lose the file. Errors
// name the file as what ("the audit log").
//
// The file is 3gs's own and never a link: a symbolic link at path is
// refused, its target untouched, and the error wraps ErrSymlink.
// Whoever can write the directory could otherwise have the next append
// land in any file 3gs may write.
func AppendAt(path, what string, want int64, fill func(io.Writer) error) error {
	f, err := OpenNoFollow(path, what, os.O_RDWR|os.O_APPEND|os.O_CREATE|OpenFlags, 0o600)
	if errors.Is(err, ErrSymlink) {
		return err
	}
	if err != nil {
		return fmt.Errorf("opening %s: %w", what, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s %s is not a regular file", what, path)
	}
	if st.Size() != want {
		return fmt.Errorf("%s %s is %d bytes, not the %d this process left it at: %w", what, path, st.Size(), want, ErrNotAsLeft)
	}
	if err := fill(f); err != nil {
		f.Truncate(want)
		return fmt.Errorf("writing %s %s (nothing was changed): %w", what, path, err)
	}
	if err := f.Sync(); err != nil {
		f.Truncate(want)
		return fmt.Errorf("syncing %s %s (nothing was changed): %w", what, path, err)
	}
	if want == 0 {
		syncDir(filepath.Dir(path))
	}
	return nil
}

// Cut truncates the regular file at path to size bytes and syncs it: to
// drop a torn last record, or records an interrupted change wrote. A
// symbolic link at path is refused (see AppendAt); what names the file.
func Cut(path, what string, size int64) error {
	f, err := OpenNoFollow(path, what, os.O_RDWR|OpenFlags, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if err := f.Truncate(size); err != nil {
		return err
	}
	return f.Sync()
}
