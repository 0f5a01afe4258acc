package follow

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/safefile"
)

// A read replica keeps a copy of its origin's audit log, so that a log
// lost at the origin (a deployment that left it behind, a deleted file)
// can be restored from any replica with 3gs audit fetch, and the replica
// answers /audit and get_audit_log itself. The mirror holds only what
// checked out: entries signed by the origin's curator key, each linking
// to the one before, up to the head the signature of a copy the follower
// accepted covers. So a mirror can be no more than the curator signed: a
// replica that is compromised, or an origin that serves a rewritten log,
// cannot make it say anything else, and 3gs audit fetch checks it all
// again against the registry's own signature.
//
// It lives here, not in internal/store: store owns the writes of a
// registry this node serves as its own (under its lock, with its key),
// while the mirror, like the cached copy beside it (peer.SaveCopy), is
// what the follower verified of another node's, written by the one
// goroutine that follows it.

// Mirror is a read replica's verified copy of its origin's audit log, a
// file appended to as the origin's log grows. Its methods are safe for
// concurrent use.
type Mirror struct {
	path string
	key  ed25519.PublicKey
	mu   sync.Mutex
	tip  tip
}

// tip is where a mirror file ends: its last entry, the registry digest
// that entry records, and the file's size.
type tip struct {
	head  auditlog.Head
	after string
	size  int64
}

// MirrorPath is the mirror of the log of the origin whose key is key, in
// the follower's cache directory.
func MirrorPath(cacheDir string, key ed25519.PublicKey) string {
	return filepath.Join(cacheDir, curatorkey.Encode(key)+".audit.jsonl")
}

// OpenMirror opens the mirror at path for the origin whose key is key,
// checking it whole: a torn last line (a crash during an append) is cut,
// and a file that does not check out is removed, to be fetched again. It
// returns what it repaired, for the log.
func OpenMirror(path string, key ed25519.PublicKey) (*Mirror, string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, "", err
	}
	m := &Mirror{path: path, key: key}
	// What a rebuild killed part way left beside the file (see rebuild).
	safefile.RemoveStale(path, time.Now())
	rep, err := auditlog.Read(path, auditlog.Options{Key: key})
	switch {
	case err != nil:
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, "", err
		}
		return m, fmt.Sprintf("the mirror of the origin's audit log %s did not check out (%v); it is fetched again", path, err), nil
	case rep.Torn > 0:
		if err := auditlog.Cut(path, rep.Size); err != nil {
			return nil, "", err
		}
	}
	m.tip = tip{head: rep.Head, size: rep.Size}
	if rep.Last != nil {
		m.tip.after = rep.Last.After
	}
	if rep.Torn > 0 {
		return m, fmt.Sprintf("the mirror of the origin's audit log %s ended in a partial line (%d bytes), left by a write cut short; it was cut", path, rep.Torn), nil
	}
	return m, "", nil
}

// Mirrored returns the mirror's file and the last entry it holds.
func (m *Mirror) Mirrored() (string, auditlog.Head) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.path, m.tip.head
}

// errMirrored stops reading the origin's log at the head wanted.
var errMirrored = errors.New("reached the head mirrored")

// reader opens the origin's log from the entry after seq after up to seq
// until.
type reader func(after, until int) (io.ReadCloser, error)

// Sync brings the mirror to head, the head the signature of a copy the
// follower accepted covers, whose entry records the registry sha. A
// mirror that the origin's log does not extend (a rewritten history, a
// head it already passed, another curator's log) is built again from the
// origin's first entry beside it and put in its place only once that
// checks out; until then the old one stays as it is. Call it from one
// goroutine at a time (the follower's).
func (m *Mirror) Sync(head auditlog.Head, sha string, read reader) (restarted bool, err error) {
	// Only Sync changes the tip, and one goroutine at a time calls it:
	// the lock is held to read and set the tip, not across the fetch, so
	// that /audit keeps answering from the mirror meanwhile.
	m.mu.Lock()
	cur := m.tip
	m.mu.Unlock()
	if cur.head == head {
		return false, nil
	}
	if cur.head.Seq < head.Seq {
		t, lines, err := fetch(m.key, cur, head, sha, read)
		if err == nil {
			if err = auditlog.AppendLines(m.path, cur.size, lines); err == nil {
				m.setTip(t)
			}
		}
		var p *auditlog.Problem
		if !errors.As(err, &p) || cur.head.Seq == 0 {
			return false, err
		}
	}
	return true, m.rebuild(head, sha, read)
}

func (m *Mirror) setTip(t tip) {
	m.mu.Lock()
	m.tip = t
	m.mu.Unlock()
}

// rebuild writes the origin's log up to head to a new file that replaces
// the mirror (safefile.Write: staged beside it, synced, renamed, the folder
// synced), never through a link at its name.
func (m *Mirror) rebuild(head auditlog.Head, sha string, read reader) error {
	t, lines, err := fetch(m.key, tip{}, head, sha, read)
	if err != nil {
		return err
	}
	// The tip and the file change together: a reader that learnt the old
	// tip reads the old file it opened, or the new one, which holds the
	// same entries up to any head both have (or fails its hash check).
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := safefile.WriteNoFollow(m.path, lines, 0o600); err != nil {
		return err
	}
	m.tip = t
	return nil
}

// fetch reads the origin's log after from's head up to head and checks
// every entry under key. It returns the lines that take a file ending at
// from to head, and that file's new tip.
func fetch(key ed25519.PublicKey, from tip, head auditlog.Head, sha string, read reader) (tip, []byte, error) {
	r, err := read(from.head.Seq, head.Seq)
	if err != nil {
		return from, nil, err
	}
	defer r.Close()
	var buf bytes.Buffer
	rep, err := auditlog.Verify(r, auditlog.Options{
		Key: key, From: from.head.Seq, FromHash: from.head.Hash, FromAfter: from.after,
		Each: func(e *gen.AuditEntry, line []byte) error {
			if from.size+int64(buf.Len()+len(line)+1) > auditlog.MaxSize {
				return fmt.Errorf("the origin's audit log is longer than %d bytes, which no mirror holds", auditlog.MaxSize)
			}
			buf.Write(line)
			buf.WriteByte('\n')
			if e.Seq == head.Seq {
				return errMirrored
			}
			return nil
		},
	})
	switch {
	case err == nil:
		return from, nil, &auditlog.Problem{Seq: rep.Head.Seq + 1, Reason: fmt.Sprintf("missing: the origin's log ends at seq %d, short of seq %d its signature covers", rep.Head.Seq, head.Seq)}
	case !errors.Is(err, errMirrored):
		return from, nil, err
	case rep.Head.Hash != head.Hash:
		return from, nil, &auditlog.Problem{Seq: head.Seq, Reason: fmt.Sprintf("the origin's entry hashes to %.16s…, but its signature names %.16s…: the log was rewritten", rep.Head.Hash, head.Hash)}
	case rep.Last.After != sha:
		return from, nil, &auditlog.Problem{Seq: head.Seq, Reason: fmt.Sprintf("the entry records the registry %.16s…, but the copy accepted is %.16s…", rep.Last.After, sha)}
	}
	return tip{head: rep.Head, after: rep.Last.After, size: from.size + int64(buf.Len())}, buf.Bytes(), nil
}
