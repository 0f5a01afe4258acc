package auditlog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/safefile"
)

// Page sizes for readers of the log (get_audit_log, GET /audit).
const (
	DefaultPage = 100
	MaxPage     = 1000
)

// ErrNoLog is wrapped by the error a server's log readers return when it
// keeps no audit log, so that callers in other packages (the HTTP
// endpoints) can answer "not here" rather than "broken".
var ErrNoLog = errors.New("this server keeps no audit log")

// Query selects the entries of a page.
type Query struct {
	// Since: only entries with a greater seq (0: from the first).
	Since int
	// Slug and Action, when not empty, keep only entries with that slug
	// or that action.
	Slug   string
	Action string
	// Limit is the most entries a page holds: DefaultPage when 0 or less,
	// at most MaxPage.
	Limit int
}

// Page is a run of entries of a log, as its lines are stored.
type Page struct {
	// Lines are the matching entries' lines, oldest first, byte for byte
	// as in the file, without their newline: a reader hashes and checks
	// signatures over exactly these bytes.
	Lines [][]byte
	// Entries are Lines decoded, in the same order.
	Entries []*gen.AuditEntry
	// Next is the Since of the following page: set when more entries
	// that match follow, up to the head; 0 when the page is the last.
	Next int
	// Head is the entry the page was read up to (the zero Head for an
	// empty log), so a reader can tell whether the log moved between two
	// pages.
	Head Head
}

// ReadPage reads the log at path up to the entry with seq upTo and returns
// the entries after q.Since that match q. Entries after upTo are never
// read: the server passes the head it serves, and what follows it may
// belong to a change still being written or one that is about to be
// undone.
//
// It does not check signatures or the chain again: the log was verified
// when the server opened it and every later line is one it appended
// itself. It does check that each line it reads holds the seq its place
// says, which is cheap and catches a file replaced underneath. A missing
// file is an empty log; a file shorter than upTo is an error.
//
// The cost is one pass over the file up to upTo (entries before Since
// are counted, not decoded): there is no index, and a curator's log is
// small next to what a linear read handles.
func ReadPage(path string, q Query, upTo int) (*Page, error) {
	q = q.normal()
	page := &Page{}
	if upTo <= 0 {
		return page, nil
	}
	f, _, err := openForPage(path, upTo)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readPage(io.LimitReader(f, MaxSize), q, upTo, page)
}

// normal is q with its limit defaulted and bounded and Since at least 0.
func (q Query) normal() Query {
	if q.Limit <= 0 {
		q.Limit = DefaultPage
	}
	q.Limit = min(q.Limit, MaxPage)
	q.Since = max(q.Since, 0)
	return q
}

// openForPage opens the log a page is read from, served up to seq upTo.
func openForPage(path string, upTo int) (*os.File, fs.FileInfo, error) {
	f, st, err := safefile.Open(path, MaxSize, "audit log")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("the audit log is missing, though the head served is seq %d: it was moved or deleted after the server opened it", upTo)
	}
	return f, st, err
}

func readPage(r io.Reader, q Query, upTo int, page *Page) (*Page, error) {
	br := bufio.NewReaderSize(r, MaxLine+1)
	for n := 1; n <= upTo; n++ {
		line, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return nil, fmt.Errorf("audit log seq %d: the line is longer than %d bytes, which no entry is", n, MaxLine)
		case err == io.EOF:
			// A last line without its newline is a write cut short, not
			// an entry.
			return nil, fmt.Errorf("the audit log ends at seq %d, before seq %d, the head served: it was cut after the server opened it", n-1, upTo)
		case err != nil:
			return nil, err
		}
		line = line[:len(line)-1]
		if n == upTo {
			page.Head = Head{Seq: n, Hash: HashLine(line)}
		}
		if n <= q.Since || page.Next > 0 {
			continue
		}
		// Once a further page is known to exist (add set page.Next),
		// the rest is only read to reach the head.
		if _, err := q.add(page, n, line, true); err != nil {
			return nil, err
		}
	}
	return page, nil
}

// add decodes line, which must hold entry seq, and adds it to page when
// it matches q: a copy when shared is true (the line is in a buffer the
// caller reuses), else line itself. When page holds q.Limit entries
// already it sets page.Next instead and reports full.
func (q Query) add(page *Page, seq int, line []byte, shared bool) (full bool, err error) {
	e, err := gen.DecodeAuditEntry(line)
	if err != nil {
		return false, fmt.Errorf("audit log seq %d: not an audit entry: %w", seq, err)
	}
	if e.Seq != seq {
		return false, fmt.Errorf("audit log seq %d: the line holds seq %d: the file was changed after the server opened it", seq, e.Seq)
	}
	if !q.matches(e) {
		return false, nil
	}
	if len(page.Lines) == q.Limit {
		// One more match exists, so a further page is worth asking for.
		page.Next = page.Entries[len(page.Entries)-1].Seq
		return true, nil
	}
	if shared {
		line = bytes.Clone(line)
	}
	page.Lines = append(page.Lines, line)
	page.Entries = append(page.Entries, e)
	return false, nil
}

func (q Query) matches(e *gen.AuditEntry) bool {
	if q.Action != "" && string(e.Action) != q.Action {
		return false
	}
	if q.Slug != "" && (e.Slug == nil || *e.Slug != q.Slug) {
		return false
	}
	return true
}
