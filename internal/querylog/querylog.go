// Package querylog keeps the opt-in log of get_sources calls that a curator
// reads to learn what agents ask and do not get answered (3gs serve
// --query-log FILE, 3gs misses FILE).
//
// A line is a gen.QueryLog (schema/querylog.schema.json): the time, the
// query or slug, how the call ended and the best candidates. Nothing that
// says who asked is ever written: no token, session, address or client
// name. The file is created 0600, appended to one line per write, and
// rotated when it would pass its size bound: FILE becomes FILE.1 (replacing
// the previous one), so the log never takes more than twice the bound.
package querylog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/safefile"
)

// DefaultMaxBytes is the size at which the log is rotated when the
// operator sets none.
const DefaultMaxBytes = 10 << 20

// Log appends entries to a file. It is safe for concurrent use: writes are
// serialized, and each is one whole line.
type Log struct {
	mu     sync.Mutex
	path   string
	max    int64
	f      *os.File
	size   int64
	log    *slog.Logger
	failed bool // the last write failed; warn again only after a success
}

// Open opens (or creates, mode 0600) the log at path, refusing anything
// but a regular file: a named pipe would block the server, a device would
// swallow the log. maxBytes ≤ 0 means DefaultMaxBytes.
func Open(path string, maxBytes int64, log *slog.Logger) (*Log, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	l := &Log{path: path, max: maxBytes, log: log}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Log) open() error {
	// A symbolic link there is refused, not followed: the log is 3gs's
	// own. O_NONBLOCK: opening a FIFO for writing must not wait for a
	// reader.
	f, err := safefile.OpenNoFollow(l.path, "the query log", os.O_WRONLY|os.O_APPEND|os.O_CREATE|safefile.OpenFlags, 0o600)
	if errors.Is(err, safefile.ErrSymlink) {
		return err
	}
	if err != nil {
		return fmt.Errorf("query log %s: %w", l.path, err)
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	if err == nil && st.Mode().Perm()&0o077 != 0 {
		// Queries can be private; an existing file others may read is
		// narrowed to what a new one gets.
		err = f.Chmod(0o600)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("query log %s: %w", l.path, err)
	}
	l.f, l.size = f, st.Size()
	return nil
}

// Record appends e. A failure is logged (once until a write succeeds
// again) and never reaches the caller: the log must not cost an answer.
func (l *Log) Record(e *gen.QueryLog) {
	line := Line(e)
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.write(line)
	switch {
	case err != nil && !l.failed:
		l.failed = true
		l.log.Warn("query log: write failed; queries are not being logged", "path", l.path, "err", err)
	case err == nil && l.failed:
		l.failed = false
		l.log.Info("query log: writing again", "path", l.path)
	}
}

func (l *Log) write(line []byte) error {
	if l.f == nil {
		if err := l.open(); err != nil {
			return err
		}
	}
	if l.size > 0 && l.size+int64(len(line)) > l.max {
		if err := l.rotate(); err != nil {
			return err
		}
	}
	n, err := l.f.Write(line)
	l.size += int64(n)
	return err
}

// rotate moves the full log to PATH.1 and starts an empty one.
func (l *Log) rotate() error {
	l.f.Close()
	l.f = nil
	if err := os.Rename(l.path, l.path+".1"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return l.open()
}

// Line is e as one line of the log: the generated encoder's JSON (schema
// order, only the members set), compacted, and a newline.
func Line(e *gen.QueryLog) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, gen.EncodeQueryLog(e)); err != nil {
		panic("querylog: the generated encoder wrote invalid JSON: " + err.Error())
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// Close closes the file; later records reopen it.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
