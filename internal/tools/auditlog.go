package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/three-good-sources/3gs/internal/registry"
)

// auditEntry is one line of the audit log.
type auditEntry struct {
	Time         string `json:"time"`
	Token        string `json:"token"`
	Tool         string `json:"tool"`
	Slug         string `json:"slug,omitempty"`
	BeforeSHA256 string `json:"before_sha256"`
	AfterSHA256  string `json:"after_sha256"`
	Version      string `json:"version"`
}

// audit appends one line for a change and syncs it.
func (e *editor) audit(now time.Time, caller, tool, slug string, before, after *registry.Registry) error {
	line, err := json.Marshal(auditEntry{
		Time: now.UTC().Format(time.RFC3339Nano), Token: caller, Tool: tool, Slug: slug,
		BeforeSHA256: before.SHA256(), AfterSHA256: after.SHA256(), Version: after.Version(),
	})
	if err != nil {
		return err
	}
	return appendLine(e.AuditLog, append(line, '\n'))
}

// appendLine appends line (ending in a newline) to the log at path and
// syncs it, leaving only whole lines whatever fails.
//
// The line goes out in one write to a file opened for appending. If that
// write fails part way (a full disk), the file is cut back to where it
// was, so the next line is not glued onto a fragment. A fragment left by a
// crash mid-write is cut off before anything is appended after it (a
// server also cuts one when it starts, and says so: RepairAuditLog).
func appendLine(path string, line []byte) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("opening the audit log: %w", err)
	}
	defer f.Close()
	size, _, err := cutTornTail(f)
	if err != nil {
		return fmt.Errorf("repairing the audit log %s: %w", path, err)
	}
	if _, err := writeAudit(f, line); err != nil {
		f.Truncate(size)
		return fmt.Errorf("writing the audit log %s (nothing was changed): %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Truncate(size)
		return fmt.Errorf("syncing the audit log %s (nothing was changed): %w", path, err)
	}
	return nil
}

// writeAudit writes to the audit log; tests replace it to fail part way.
var writeAudit = func(f *os.File, b []byte) (int, error) { return f.Write(b) }

// RepairAuditLog cuts a partial last line, the trace of a write cut short
// by a crash or a full disk, from the audit log at path and returns how
// many bytes it removed. Such a line never describes a change that was
// made: the registry is written only after its line is whole and synced.
// A missing log is not an error.
func RepairAuditLog(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("%s is not a regular file", path)
	}
	_, cut, err := cutTornTail(f)
	if err == nil && cut > 0 {
		err = f.Sync()
	}
	return cut, err
}

// cutTornTail truncates f after its last newline when it does not end in
// one, and returns the size it then has and the bytes it removed.
func cutTornTail(f *os.File) (size, cut int64, err error) {
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil || end == 0 {
		return end, 0, err
	}
	// Read backwards in blocks to the last newline; audit lines are short,
	// so this is one block unless the tail is garbage.
	const block = 4096
	buf := make([]byte, block)
	for pos := end; pos > 0; {
		n := min(int64(block), pos)
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil {
			return end, 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			size = pos + int64(i) + 1
			break
		}
	}
	if size == end {
		return end, 0, nil
	}
	if err := f.Truncate(size); err != nil {
		return end, 0, err
	}
	return size, end - size, nil
}
