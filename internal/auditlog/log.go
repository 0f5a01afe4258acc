package auditlog

import (
	"time"

	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/safefile"
)

// Read verifies the log at path (see Verify); a missing file is an empty
// log. The file must be a regular one of at most MaxSize bytes.
func Read(path string, o Options) (*Report, error) {
	f, _, err := safefile.Open(path, MaxSize, "audit log")
	if errors.Is(err, fs.ErrNotExist) {
		return &Report{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Verify(io.LimitReader(f, MaxSize), o)
}

// ErrNeedKey is returned by Append for a signed log and no key: an
// unsigned entry after signed ones would break the log.
var ErrNeedKey = errors.New("the audit log is signed by the curator key, and this process does not hold it")

// Log is a verified log open for appending. It is not safe for concurrent
// use; its owner (the editor, 3gs sign) serializes changes.
type Log struct {
	path        string
	head        Head
	last        *gen.AuditEntry
	firstSigned int
	size        int64
}

// Open returns the log at path for appending after what rep, a Read of
// path with no torn tail, found there.
func Open(path string, rep *Report) *Log {
	return &Log{path: path, head: rep.Head, last: rep.Last, firstSigned: rep.FirstSigned, size: rep.Size}
}

// Path is the log's file.
func (l *Log) Path() string { return l.path }

// Head is the last entry written.
func (l *Log) Head() Head { return l.head }

// Last is the last entry written, nil for an empty log.
func (l *Log) Last() *gen.AuditEntry { return l.last }

// Signed says whether the log holds signed entries.
func (l *Log) Signed() bool { return l.firstSigned > 0 }

// Append numbers, links and, with key, signs entries after the head, and
// writes them in one write synced before it returns. If anything fails,
// the file is cut back to where it was and the Log is unchanged. It
// refuses when the file is no longer the size this Log left it (another
// program wrote or cut it), since entries appended then would not follow
// the ones on disk.
func (l *Log) Append(key ed25519.PrivateKey, entries ...*gen.AuditEntry) (Head, error) {
	if l.Signed() && key == nil {
		return l.head, ErrNeedKey
	}
	head, first := l.head, l.firstSigned
	var buf bytes.Buffer
	for _, e := range entries {
		e.Seq = head.Seq + 1
		e.Prev = nil
		if head.Seq > 0 {
			h := head.Hash
			e.Prev = &h
		}
		e.Signature = nil
		if key != nil {
			sign(e, key)
			if first == 0 {
				first = e.Seq
			}
		}
		line := Encode(e)
		buf.Write(line)
		buf.WriteByte('\n')
		head = Head{e.Seq, HashLine(line)}
	}
	if err := AppendLines(l.path, l.size, buf.Bytes()); err != nil {
		return l.head, err
	}
	l.head, l.last, l.firstSigned = head, entries[len(entries)-1], first
	l.size += int64(buf.Len())
	return head, nil
}

// AppendLines appends b (whole lines) to the log at path, which must be
// want bytes long, and syncs it: for Append, and for a read replica's
// mirror of its origin's log (internal/follow), whose lines are the
// origin's, verified, rather than made here. A write or sync that fails part way is
// cut back, so the file holds whole entries whatever happens short of a
// crash; a crash leaves at worst a torn last line, which Verify reports
// as Torn and a starting server cuts.
func AppendLines(path string, want int64, b []byte) error {
	err := safefile.AppendAt(path, "the audit log", want, func(w io.Writer) error {
		_, err := writeLog(w, b)
		return err
	})
	if errors.Is(err, safefile.ErrNotAsLeft) {
		return fmt.Errorf("%w. Nothing was changed; 3gs audit verify %s says whether it is still whole", err, path)
	}
	return err
}

// writeLog writes to the log; tests replace it to fail part way.
var writeLog = func(w io.Writer, b []byte) (int, error) { return w.Write(b) }

// Cut truncates the log at path to size bytes and syncs it: to drop a
// torn last line (Report.Torn), or the entries after the head a registry
// signature covers, which an interrupted change wrote and the registry
// never took.
func Cut(path string, size int64) error { return safefile.Cut(path, "the audit log", size) }

// Fit is how a log relates to the registry it records.
type Fit struct {
	// Pending is how many entries follow the last one the registry
	// records: an interrupted change wrote them and the registry never
	// took them. Cut the log at CutAt to drop them (SaveCut keeps them).
	Pending int
	CutAt   int64
	// Unrecorded is set when the registry is not the one the log's last
	// entry produced: it was changed outside the log (a hand edit, or a
	// registry signed by a 3gs that kept no log), or the log is empty.
	Unrecorded bool
}

// maxPending is the most entries one interrupted change can leave after
// the head the registry's signature covers: the change's own entry, after
// a reload entry recording a registry changed outside the log.
const maxPending = 2

// Match checks a log (rep, read with Mark set to covered.Seq) against the
// registry whose SHA-256 is sha and whose verified signature covers the
// log head covered (nil: the signature covers none, or there is none).
//
// A covered head the log does not hold, or holds with another hash, is an
// error: the log was cut or rewritten after the registry was signed. So
// are more entries after it than one interrupted change leaves: that is
// an older registry and signature put back (a rollback), and cutting them
// would destroy the signed record of the changes it undoes. Without a
// covered head, a last entry whose before is this registry and whose
// after is not is an interrupted change too (a server without the key).
func Match(rep *Report, sha string, covered *Head) (*Fit, error) {
	if covered == nil {
		fit := &Fit{Unrecorded: rep.Last == nil || rep.Last.After != sha}
		if fit.Unrecorded && rep.Last != nil && rep.Last.Before != nil && *rep.Last.Before == sha {
			fit.Unrecorded, fit.Pending, fit.CutAt = false, 1, rep.LastStart
		}
		return fit, nil
	}
	switch {
	case rep.Head.Seq < covered.Seq:
		if rep.Head.Seq == 0 {
			return nil, fmt.Errorf("the registry's signature covers the audit log up to seq %d, and %w: it was not copied with the registry, was deleted, or this is not the registry's log", covered.Seq, ErrMissing)
		}
		return nil, &Problem{rep.Head.Seq + 1, fmt.Sprintf("missing: the log ends at seq %d, but the registry's signature covers it up to seq %d, so its tail was cut", rep.Head.Seq, covered.Seq)}
	case rep.Mark == nil || rep.Mark.Hash != covered.Hash:
		return nil, &Problem{covered.Seq, fmt.Sprintf("not the entry the registry's signature covers (its line hashes to %.16s…, the signature names %.16s…): the log was rewritten after the registry was signed", markHash(rep), covered.Hash)}
	case rep.Mark.After != sha:
		return nil, &Problem{covered.Seq, fmt.Sprintf("the signed head records the registry %.16s…, but the registry is %.16s…", rep.Mark.After, sha)}
	}
	pending := rep.Head.Seq - covered.Seq
	if pending > maxPending || pending == maxPending && rep.AfterMark[0] != gen.AuditActionReload {
		return nil, &Problem{covered.Seq + 1, fmt.Sprintf("the log goes on %d entries past seq %d, the head the registry's signature covers, more than one interrupted change leaves: an older registry and signature were put back (a rollback). Put the newest registry and signature back; the log is left as it is", pending, covered.Seq)}
	}
	return &Fit{Pending: pending, CutAt: rep.Mark.End}, nil
}

// SaveCut appends the bytes of the log at path from offset at on to
// path.cut and syncs it, so that entries about to be cut off (an
// interrupted change's) are kept for whoever wants to look, not destroyed.
func SaveCut(path string, at int64) error {
	f, _, err := safefile.Open(path, MaxSize, "audit log")
	if err != nil {
		return err
	}
	defer f.Close()
	tail, err := io.ReadAll(io.NewSectionReader(f, at, MaxSize))
	if err != nil || len(tail) == 0 {
		return err
	}
	out, err := safefile.OpenNoFollow(path+".cut", "the audit log's cut entries", os.O_WRONLY|os.O_APPEND|os.O_CREATE|safefile.OpenFlags, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	if _, err := out.Write(tail); err != nil {
		return err
	}
	return out.Sync()
}

func markHash(rep *Report) string {
	if rep.Mark == nil {
		return "(none)"
	}
	return rep.Mark.Hash
}

// Checkpoint returns a function that puts the log back as it is now:
// cuts the file to its present size and forgets what was appended since.
// A change whose registry write fails after its entry was appended calls
// it, so the log never records a change that did not happen.
func (l *Log) Checkpoint() func() error {
	saved := *l
	return func() error {
		if err := Cut(l.path, saved.size); err != nil {
			return err
		}
		*l = saved
		return nil
	}
}

// ErrRepair is wrapped by Repair's errors when the file could not be cut
// or the cut entries kept (a disk or permission problem, not the log's).
var ErrRepair = errors.New("the audit log could not be repaired")

// Repair cuts from the log at path, just read as rep with o, what an
// interrupted write leaves, as a starting server and 3gs sign both do: a
// torn last line, and the entries Match finds after the last one the
// registry (digest sha, signature covering covered) records, which are
// kept in path.cut rather than destroyed. It returns the log as it is
// afterwards, the fit, and one sentence per repair made. A *Problem from
// Match (a log cut or rewritten, a registry put back) is returned as is,
// with nothing cut but the torn line.
func Repair(path string, rep *Report, o Options, sha string, covered *Head) (*Report, *Fit, []string, error) {
	fail := func(format string, args ...any) (*Report, *Fit, []string, error) {
		return nil, nil, nil, fmt.Errorf("%w: "+format, append([]any{ErrRepair}, args...)...)
	}
	var notes []string
	if rep.Torn > 0 {
		if err := Cut(path, rep.Size); err != nil {
			return fail("cutting the partial last line of %s: %w", path, err)
		}
		notes = append(notes, fmt.Sprintf("the audit log %s ended in a partial line of %d bytes, left by a write cut short (a crash or a full disk); removed it. It recorded no change: a registry is written only after its entry is whole and synced", path, rep.Torn))
		rep.Torn = 0
	}
	fit, err := Match(rep, sha, covered)
	if err != nil || fit.Pending == 0 {
		return rep, fit, notes, err
	}
	// Kept beside the log rather than destroyed: they are signed records,
	// even of a change that never landed.
	if err := SaveCut(path, fit.CutAt); err != nil {
		return fail("keeping the entries the registry never took from %s in %s.cut: %w", path, path, err)
	}
	if err := Cut(path, fit.CutAt); err != nil {
		return fail("cutting entries the registry never took from %s: %w", path, err)
	}
	after := "the last entry the registry records"
	if covered != nil {
		after = fmt.Sprintf("seq %d, the head the registry's signature covers", covered.Seq)
	}
	entries := "entries"
	if fit.Pending == 1 {
		entries = "entry"
	}
	notes = append(notes, fmt.Sprintf("the audit log %s held %d %s after %s: a change was interrupted after its entry was written and before the registry was. Moved them to %s.cut; the registry never took that change", path, fit.Pending, entries, after, path))
	// Read again rather than trim the report by hand: what is appended
	// next must follow exactly what is now on disk.
	rep, err = Read(path, o)
	return rep, fit, notes, err
}

// CatchUp returns the entries that bring a log whose last entry is last
// to the registry with digest sha at version: a start entry for an empty
// log; an entry of action when sha is not the registry the last entry
// produced (a change made outside the log, found by a reload or recorded
// by 3gs sign); else none. actor names who records them, at when.
func CatchUp(last *gen.AuditEntry, action gen.AuditAction, at time.Time, actor, version, sha string) []*gen.AuditEntry {
	switch {
	case last == nil:
		return []*gen.AuditEntry{{Time: at, Action: gen.AuditActionStart, Actor: actor, Version: version, After: sha}}
	case last.After != sha:
		before := last.After
		return []*gen.AuditEntry{{Time: at, Action: action, Actor: actor, Version: version, Before: &before, After: sha}}
	}
	return nil
}
