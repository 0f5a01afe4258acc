// Package auditlog keeps a registry's audit log: one line per change
// (schema/auditentry.schema.json), numbered from 1 without gaps, each
// naming the SHA-256 of the line before it and, in a signed log, signed by
// the curator key. The registry's signature names the log's head (the seq
// and hash of the entry that produced the registry), so whoever holds a
// signed registry can ask for the log up to that head and check that it
// ends there, and whoever held an earlier head can check that the new log
// extends it rather than rewriting it (a fork).
//
// Why a hash chain and not a Merkle tree (RFC 6962): the parties that
// check a log here either read it all (3gs audit verify, a server that
// starts) or read the entries after a head they already hold (a peer
// refreshing); both are linear anyway, and a chain is what a reader can
// check with sha256sum. A tree would buy logarithmic proofs for logs far
// larger than a curator writes.
package auditlog

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
)

// Head names the last entry of a log: its seq and the hex SHA-256 of its
// line as stored (without the newline). The zero Head is an empty log.
type Head struct {
	Seq  int
	Hash string
}

func (h Head) String() string {
	if h.Seq == 0 {
		return "empty"
	}
	return fmt.Sprintf("seq %d (%.12s…)", h.Seq, h.Hash)
}

const (
	// entryDomain starts the message an entry's signature covers, so a
	// signature over an entry can never be taken for one over anything
	// else the curator key signs (a registry, a statement).
	entryDomain = "3gs audit entry v1\n"
	// MaxLine bounds one line; a real entry is under 700 bytes.
	MaxLine = 8 << 10
	// MaxSize bounds a log file read whole: over a million entries.
	MaxSize = 1 << 30
)

// Encode returns e's line without its newline: the generated encoder's
// schema order, compacted. It is the only spelling Verify accepts.
func Encode(e *gen.AuditEntry) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, gen.EncodeAuditEntry(e)); err != nil {
		panic("auditlog: the generated encoder wrote invalid JSON: " + err.Error())
	}
	return b.Bytes()
}

// HashLine is the hash an entry's successor names in prev.
func HashLine(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}

// signedBytes is what an entry's signature covers: the domain line and
// the entry's line without its signature.
func signedBytes(e *gen.AuditEntry) []byte {
	c := *e
	c.Signature = nil
	return append([]byte(entryDomain), Encode(&c)...)
}

// sign sets e's signature, made with key.
func sign(e *gen.AuditEntry, key ed25519.PrivateKey) {
	s := base64.StdEncoding.EncodeToString(ed25519.Sign(key, signedBytes(e)))
	e.Signature = &s
}

// ErrLegacy is wrapped by the error for a log in the unsigned, unchained
// format of 3gs before this one (lines with tool, token, before_sha256).
var ErrLegacy = errors.New("audit log in the old format")

// ErrMissing is wrapped by the error for a log that is empty or absent
// while the registry's signature covers entries of it: most often a
// deployment that copied the registry and its signature without the log.
var ErrMissing = errors.New("the log is empty or missing")

// MissingFix says how to recover from ErrMissing for the log at logPath
// beside the registry at regPath: first from a copy published elsewhere
// (a read replica's, a peer's, a static host's), which 3gs audit fetch
// checks entry by entry against the registry's own signature.
func MissingFix(logPath, regPath string) string {
	fetch := "3gs audit fetch --from REPLICA_OR_PUBLISHED_URL --registry " + regPath
	if logPath != regPath+".audit.jsonl" {
		fetch += " --audit-log " + logPath
	}
	return "the log belongs beside the registry and its signature, and a copy of the two must take it along. Restore it from a read replica of this node, or any node or host that publishes it: " +
		fetch + " (it checks the copy against the registry's signature); or copy " + logPath +
		" from where the registry was signed (or from a backup) next to " + regPath + "; or, to start a new log and lose the history, move " +
		regPath + ".sig aside and sign again: 3gs sign --key-file KEY " + regPath
}

// Problem is the first entry of a log that fails a check.
type Problem struct {
	// Seq is the entry expected at that place: the line number.
	Seq    int
	Reason string
}

func (p *Problem) Error() string { return fmt.Sprintf("seq %d: %s", p.Seq, p.Reason) }

// Mark is what Verify records of the entry Options.Mark asks for.
type Mark struct {
	Head
	// After is the registry digest the entry produced.
	After string
	// End is the offset just past the entry's line: cut there to drop
	// every entry after it.
	End int64
}

// Report is what Verify learnt of a log.
type Report struct {
	// Entries is how many entries checked out; Head is the last of them
	// and Last that entry itself (nil for an empty log).
	Entries int
	Head    Head
	Last    *gen.AuditEntry
	// FirstSigned is the seq of the first signed entry; 0 when no entry
	// is signed.
	FirstSigned int
	// Size is the bytes of whole lines; Torn the bytes after them, a last
	// line without its newline (a write cut short), which is not part of
	// the log.
	Size, Torn int64
	// Mark is the entry Options.Mark named, when the log reaches it.
	Mark *Mark
	// AfterMark holds the actions of the first entries after Mark (at
	// most maxPending+1 of them): what Match needs to tell an interrupted
	// change from a registry put back.
	AfterMark []gen.AuditAction
	// LastStart is the offset at which the last entry's line begins.
	LastStart int64
}

// Signed says whether the log has signed entries, so that every later
// entry must be signed too.
func (r *Report) Signed() bool { return r.FirstSigned > 0 }

// Options tune Verify.
type Options struct {
	// Key is the curator key signed entries must verify under; with nil,
	// a signed entry is a problem (there is nothing to check it with).
	Key ed25519.PublicKey
	// Mark asks Verify to record the entry with this seq (0: none).
	Mark int
	// Each, when set, is called with every entry that checked out, in
	// order; an error it returns stops Verify and is returned.
	Each func(e *gen.AuditEntry, line []byte) error
	// From and FromHash, when From > 0, say r starts after the entry with
	// seq From whose line hashes to FromHash (a tail fetched from a peer):
	// the first line must be From+1 and link to it. FromAfter is that
	// entry's registry digest, for the continuity check.
	From      int
	FromHash  string
	FromAfter string
}

// Verify reads a log from r and checks every entry: it decodes strictly
// and is in canonical form, seqs run from 1 without gaps, each prev is the
// hash of the line before, each before is the after of the entry before,
// start opens the log and only it, and every signed entry verifies under
// o.Key, with no unsigned entry after a signed one. It stops at the first
// problem, returning a *Problem that names the seq, together with the
// report of the entries before it.
func Verify(r io.Reader, o Options) (*Report, error) {
	br := bufio.NewReaderSize(r, MaxLine+1)
	rep := &Report{}
	prevHash, prevAfter := o.FromHash, o.FromAfter
	rep.Head = Head{Seq: o.From, Hash: o.FromHash}
	var off int64
	for n := o.From + 1; ; n++ {
		line, err := br.ReadSlice('\n')
		switch {
		case err == io.EOF:
			rep.Size, rep.Torn = off, int64(len(line))
			return rep, nil
		case errors.Is(err, bufio.ErrBufferFull):
			return rep, &Problem{n, fmt.Sprintf("line %d is longer than %d bytes, which no entry is", n-o.From, MaxLine)}
		case err != nil:
			return rep, err
		}
		start := off
		off += int64(len(line))
		line = line[:len(line)-1]
		e, err := check(line, n, prevHash, prevAfter, rep, o.Key)
		if err != nil {
			return rep, err
		}
		h := HashLine(line)
		rep.Entries++
		rep.Head, rep.Last, rep.LastStart = Head{n, h}, e, start
		if o.Mark > 0 && n > o.Mark && len(rep.AfterMark) <= maxPending {
			rep.AfterMark = append(rep.AfterMark, e.Action)
		}
		prevHash, prevAfter = h, e.After
		if n == o.Mark {
			rep.Mark = &Mark{Head: rep.Head, After: e.After, End: off}
		}
		if o.Each != nil {
			if err := o.Each(e, line); err != nil {
				return rep, err
			}
		}
	}
}

// check checks one line expected to hold entry n.
func check(line []byte, n int, prevHash, prevAfter string, rep *Report, key ed25519.PublicKey) (*gen.AuditEntry, error) {
	bad := func(format string, args ...any) error { return &Problem{n, fmt.Sprintf(format, args...)} }
	e, err := gen.DecodeAuditEntry(line)
	if err != nil {
		if n == 1 && legacy(line) {
			return nil, fmt.Errorf("%w: its lines have no seq, prev or signature, so nothing shows they were not edited; 3gs audit migrate starts a signed log that records the old file's digest", ErrLegacy)
		}
		return nil, bad("not an audit entry: %v", err)
	}
	if !bytes.Equal(Encode(e), line) {
		return nil, bad("the line is not in the form 3gs writes (member order, spacing or escapes differ): it was edited")
	}
	if e.Seq != n {
		return nil, bad("line %d holds seq %d: entries were removed, reordered or inserted here", n, e.Seq)
	}
	switch {
	case n == 1 && e.Prev != nil:
		return nil, bad("the first entry names a prev")
	case n > 1 && e.Prev == nil:
		return nil, bad("prev is missing")
	case n > 1 && *e.Prev != prevHash:
		return nil, bad("prev is %.16s…, but entry %d hashes to %.16s…: entry %d was changed, or this one does not follow it", *e.Prev, n-1, prevHash, n-1)
	}
	start := e.Action == gen.AuditActionStart
	switch {
	case n == 1 && !start:
		return nil, bad("the log does not open with a start entry (it holds %s): its beginning was cut off", e.Action)
	case n > 1 && start:
		return nil, bad("a start entry in the middle of the log")
	case start && e.Before != nil:
		return nil, bad("a start entry names a before")
	case !start && e.Before == nil:
		return nil, bad("before is missing")
	case !start && *e.Before != prevAfter:
		return nil, bad("before is %.16s…, but entry %d left the registry at %.16s…: a change was made that the log does not record", *e.Before, n-1, prevAfter)
	case !start && e.LegacyLogSHA256 != nil:
		return nil, bad("only a start entry names a legacy log")
	}
	if e.Signature == nil {
		if rep.Signed() {
			return nil, bad("unsigned, after signed entries from seq %d on: whoever wrote it did not hold the curator key", rep.FirstSigned)
		}
		return e, nil
	}
	if key == nil {
		return nil, bad("signed, and no key was given to check it with")
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(*e.Signature)
	if err != nil || !ed25519.Verify(key, signedBytes(e), raw) {
		return nil, bad("the signature does not verify under the curator key %s: the entry was changed, or signed with another key", curatorkey.Encode(key))
	}
	if !rep.Signed() {
		rep.FirstSigned = n
	}
	return e, nil
}

// legacy reports whether line is an entry of the old format.
func legacy(line []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return false
	}
	_, tool := m["tool"]
	_, before := m["before_sha256"]
	return tool && before
}
