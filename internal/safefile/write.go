// Writing: files are written so that a reader, or a process started
// after a crash, sees either the old content or the new content, never a
// mix. Registry, signature, key and token files are all written through it.
// Append-only files (the audit log, the proposals file) grow through
// AppendAt, which cuts a failed append back.
//
// The new content goes to a temporary file in the same directory, is synced
// to disk, and is then moved into place with rename (Write) or link (Create)
// in one step; the directory is synced afterwards so the move itself
// survives a power loss.

package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Write replaces path with data, creating it with perm if it is new. An
// existing file keeps its permission bits (a registry a curator made 0640
// stays 0640). When path is a symbolic link, the file it names is
// replaced and the link stays: renaming over the link would turn it into
// a regular file and leave the linked file stale.
func Write(path string, data []byte, perm fs.FileMode) error {
	target, perm, err := resolve(path, perm)
	if err != nil {
		return err
	}
	return replace(target, data, perm)
}

// replace writes data to a temporary file beside path and renames it over
// path, then syncs the directory.
func replace(path string, data []byte, perm fs.FileMode) error {
	return replaceFrom(path, perm, writeAll(data))
}

// replaceFrom is replace with the content written by fill.
func replaceFrom(path string, perm fs.FileMode, fill func(io.Writer) error) error {
	tmp, err := stageFrom(path, perm, fill)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}

// WriteNoFollow is Write for a file that is 3gs's own (a peer's or an
// origin's cached copy), which never goes through a symbolic link: a link
// at path is refused, and neither it nor the file it names is touched.
// The temporary file is created exclusively (it cannot be a link someone
// placed), and the rename replaces the name itself: a link put at path
// after the check is replaced, never written through. An existing file
// gets perm.
func WriteNoFollow(path string, data []byte, perm fs.FileMode) error {
	return WriteNoFollowFrom(path, perm, writeAll(data))
}

// WriteNoFollowFrom is WriteNoFollow for content too large to hold at
// once (the proposals file's compaction): fill writes it to the
// temporary file, and an error from fill leaves path as it was.
func WriteNoFollowFrom(path string, perm fs.FileMode, fill func(io.Writer) error) error {
	if fi, err := os.Lstat(path); err == nil {
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			dest, _ := os.Readlink(path)
			return fmt.Errorf("%s is a symbolic link (to %s); refusing to write through it, since the file it names is not 3gs's to overwrite. Remove the link; 3gs writes the file again: %w", path, dest, ErrSymlink)
		case !fi.Mode().IsRegular():
			return fmt.Errorf("%s is not a regular file (%s); refusing to replace it", path, fi.Mode().Type())
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return replaceFrom(path, perm, fill)
}

// resolve is the file a write of path replaces, following symbolic links,
// and the mode it gets: its own when it exists, else perm.
func resolve(path string, perm fs.FileMode) (string, fs.FileMode, error) {
	target, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			dest, _ := os.Readlink(path)
			return "", 0, fmt.Errorf("%s is a symbolic link to %s, which does not exist; create that file or replace the link", path, dest)
		}
		return path, perm, nil // a new file
	}
	if err != nil {
		return "", 0, err
	}
	fi, err := os.Stat(target)
	if err != nil {
		return "", 0, err
	}
	if !fi.Mode().IsRegular() {
		return "", 0, fmt.Errorf("%s is not a regular file (%s); refusing to replace it", target, fi.Mode().Type())
	}
	return target, fi.Mode().Perm(), nil
}

// Create writes data to path only if nothing exists there yet. It never
// overwrites, even when two processes race: the final step is a hard link,
// which fails if the name is taken. The error then wraps fs.ErrExist.
func Create(path string, data []byte, perm fs.FileMode) error {
	return CreateFrom(path, perm, writeAll(data))
}

// CreateFrom is Create for content too large to hold at once: fill writes
// it to the temporary file, and an error from fill leaves nothing at path.
func CreateFrom(path string, perm fs.FileMode, fill func(io.Writer) error) error {
	tmp, err := stageFrom(path, perm, fill)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s already exists: %w", path, fs.ErrExist)
		}
		return err
	}
	return syncDir(filepath.Dir(path))
}

// StaleAge is how old a temporary file must be before RemoveStale takes it
// for the remains of an interrupted write. A write takes milliseconds, so a
// minute spares the files another process is writing right now.
const StaleAge = time.Minute

// RemoveStale deletes the temporary files that writes of path, or of files
// named after it (path.sig, ...), left behind when their process was killed,
// if they are older than StaleAge. Nothing ever reads them; they only pile
// up. It returns how many it removed.
func RemoveStale(path string, now time.Time) (int, error) {
	matches, err := filepath.Glob(filepath.Join(filepath.Dir(path), "."+escapeGlob(filepath.Base(path))+"*.tmp-*"))
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, m := range matches {
		st, err := os.Lstat(m)
		if err != nil || !st.Mode().IsRegular() || now.Sub(st.ModTime()) < StaleAge {
			continue
		}
		if err := os.Remove(m); err == nil {
			removed++
		}
	}
	return removed, nil
}

// escapeGlob quotes the characters filepath.Match treats specially.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// stage writes data to a new temporary file next to path and syncs it.
func stage(path string, data []byte, perm fs.FileMode) (string, error) {
	return stageFrom(path, perm, writeAll(data))
}

// writeAll is a fill that writes data.
func writeAll(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
}

// stageFrom is stage with the content written by fill.
func stageFrom(path string, perm fs.FileMode, fill func(io.Writer) error) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	fail := func(err error) (string, error) {
		f.Close()
		os.Remove(tmp)
		return "", err
	}
	// CreateTemp makes the file 0600; set the wanted mode before any byte
	// is written, so a secret is never readable by others even briefly.
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	if err := fill(f); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	// Some file systems cannot sync a directory; the rename has happened
	// regardless, so that is not worth failing the write for.
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) && !errors.Is(err, fs.ErrPermission) {
		return err
	}
	return nil
}
