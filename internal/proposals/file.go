package proposals

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/safefile"
)

// what names the file in messages.
const what = "proposals file"

// Options configure a Store.
type Options struct {
	// MaxPending is how many proposals may wait at once; zero means
	// DefaultMaxPending.
	MaxPending int
	// Retention is how long a decided proposal is kept after its
	// decision; zero means DefaultRetention.
	Retention time.Duration
	// MaxBytes caps the file, pending and decided proposals together;
	// zero means DefaultMaxBytes.
	MaxBytes int64
	// BodyRetention is how long a decided proposal keeps its body; zero
	// means DefaultBodyRetention.
	BodyRetention time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// File is the proposals file, open for writing by this process alone.
type File struct {
	path string
	o    Options
	lock *safefile.Lock
	mu   sync.Mutex
	// key signs each decision (SignDecisions); nil leaves them unsigned.
	key ed25519.PrivateKey
	// items are the live proposals by id; order their ids, oldest first.
	items map[string]*Proposal
	order []string
	// lines is how many lines the file holds; size its length; live
	// the length of the live proposals' lines, what a compaction leaves.
	lines int
	size  int64
	live  int64
}

// Open takes the lock of the proposals file at path (another process
// holding it is an error wrapping safefile.ErrHeld), reads it, cuts a torn
// last line, drops decided proposals past retention, and returns it ready
// for changes. notes says what was repaired.
func Open(path string, o Options) (*File, []string, error) {
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.BodyRetention <= 0 {
		o.BodyRetention = DefaultBodyRetention
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	lock, err := safefile.TryLock(path)
	if err != nil {
		return nil, nil, err
	}
	s := &File{path: path, o: o, lock: lock}
	notes, err := s.load()
	if err != nil {
		lock.Unlock()
		return nil, nil, err
	}
	// Superseded lines, or bodies dropped as it was read, make the file
	// longer than its live proposals: rewrite it.
	if err := s.tidyFile(false); err != nil {
		lock.Unlock()
		return nil, nil, err
	}
	return s, notes, nil
}

// Close gives up the lock.
func (s *File) Close() error {
	if s == nil {
		return nil
	}
	return s.lock.Unlock()
}

// Read returns the proposals the file at path holds, oldest first, without
// taking its lock: for a command while a server writes it. A torn last
// line is skipped, not cut.
func Read(path string) ([]*Proposal, error) {
	s := &File{path: path}
	if _, err := s.read(false); err != nil {
		return nil, err
	}
	out := make([]*Proposal, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.items[id])
	}
	return out, nil
}

func (s *File) load() ([]string, error) { return s.read(true) }

// read replays the file; with repair it cuts a torn last line.
func (s *File) read(repair bool) ([]string, error) {
	s.items, s.order, s.lines, s.size, s.live = map[string]*Proposal{}, nil, 0, 0, 0
	// The file is 3gs's own: a symbolic link there is refused on every
	// open (read, cut, append, rewrite), never followed.
	f, err := safefile.OpenNoFollow(s.path, what, os.O_RDONLY|safefile.OpenFlags, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if errors.Is(err, safefile.ErrSymlink) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("opening the proposals file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("the proposals file %s is not a regular file", s.path)
	}
	// A file past its cap (one an older 3gs let grow) has the bodies of
	// its decided proposals dropped as it is read, so memory holds the
	// pending ones and little more.
	over := s.o.MaxBytes > 0 && st.Size() > s.o.MaxBytes
	r := bufio.NewReaderSize(f, 64<<10)
	var notes []string
	for {
		line, err := readLine(r)
		if err == io.EOF && len(line) == 0 {
			break
		}
		p, perr := decodeLine(line)
		if err == io.EOF || perr != nil && isLast(r) {
			// A line without its newline, or a broken last line: what a
			// crash in the middle of an append leaves.
			if repair {
				if cerr := safefile.Cut(s.path, what, s.size); cerr != nil {
					return nil, fmt.Errorf("cutting the torn last line of %s: %w", s.path, cerr)
				}
				notes = append(notes, fmt.Sprintf("cut a torn last line (%d bytes) from the proposals file %s: a write was interrupted", len(line), s.path))
			}
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the proposals file %s: %w", s.path, err)
		}
		if perr != nil {
			return nil, fmt.Errorf("the proposals file %s, line %d: %w; move the file aside to start with no proposals", s.path, s.lines+1, perr)
		}
		p.line, p.off = len(line)+1, s.size
		switch {
		case !repair:
			s.put(p) // a command's read: whole, and soon gone
		case s.stale(p, over):
			s.put(p)
			if err := s.slim(p); err != nil {
				return nil, err
			}
		default:
			s.put(stripped(p, p.off))
		}
		s.lines++
		s.size += int64(len(line)) + 1
	}
	return notes, nil
}

// readLine reads one line (without its newline) of at most MaxLine bytes;
// io.EOF with a non-empty line means the file ended within it.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxLine+1 {
			return nil, fmt.Errorf("a line is longer than %d bytes", MaxLine)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil:
			return line, err
		}
		return line[:len(line)-1], nil
	}
}

// isLast reports whether r has nothing left.
func isLast(r *bufio.Reader) bool {
	_, err := r.Peek(1)
	return err == io.EOF
}

func decodeLine(line []byte) (*Proposal, error) {
	r, err := gen.DecodeProposalRecord(line)
	if err != nil {
		return nil, err
	}
	return &Proposal{ProposalRecord: *r}, nil
}

// put makes p the state of its id.
func (s *File) put(p *Proposal) {
	if old, ok := s.items[p.ID]; !ok {
		// The id is kept as the map's key and in order: a copy of its
		// own, not one sharing a decoded line's bytes (see own).
		id := strings.Clone(p.ID)
		s.order = append(s.order, id)
		s.items[id] = p
	} else {
		s.live -= int64(old.line)
	}
	s.items[p.ID] = p
	s.live += int64(p.line)
}

// tidy drops decided proposals older than Retention, and the bodies of
// those decided longer than BodyRetention ago, or of every decided one
// when force is set, the live proposals fill more than three quarters of
// the cap or the decided ones more than a quarter; when decided
// proposals still take more than a quarter, it drops the oldest of them.
// It reports whether anything changed; the file is not rewritten.
func (s *File) tidy(force bool) bool {
	drop := s.o.Now().Add(-s.o.Retention)
	n := len(s.order)
	s.order = slices.DeleteFunc(s.order, func(id string) bool {
		p := s.items[id]
		if p.Decision != nil && p.Decision.Time.Before(drop) {
			s.live -= int64(p.line)
			delete(s.items, id)
			return true
		}
		return false
	})
	changed := len(s.order) != n
	// Bodies go at once when the live proposals pass three quarters of
	// the cap, or the decided ones a quarter; compacted, decided
	// proposals may still take that quarter, and past it the oldest go.
	// Pending ones are the curator's to decide, never dropped.
	quarter := s.o.MaxBytes / 4
	force = force || s.live > 3*quarter || s.decidedBytes() > quarter
	for _, id := range s.order {
		if p := s.items[id]; s.stale(p, force) {
			// Encoding a proposal read from the file cannot fail; on
			// the odd error the body stays, which only costs room.
			if s.slim(p) == nil {
				changed = true
			}
		}
	}
	if decided := s.decidedBytes(); decided > quarter {
		n := len(s.order)
		s.order = slices.DeleteFunc(s.order, func(id string) bool {
			p := s.items[id]
			if decided <= quarter || p.Decision == nil {
				return false
			}
			decided -= int64(p.line)
			s.live -= int64(p.line)
			delete(s.items, id)
			return true
		})
		changed = changed || len(s.order) != n
	}
	return changed
}

// decidedBytes is what the decided proposals' lines take.
func (s *File) decidedBytes() int64 {
	var n int64
	for _, p := range s.items {
		if p.Decision != nil {
			n += int64(p.line)
		}
	}
	return n
}

// stale reports whether p is decided and keeps a body it need no longer
// keep: decided longer than BodyRetention ago, or at all when force is
// set.
func (s *File) stale(p *Proposal, force bool) bool {
	if p.Decision == nil || p.Digest != nil {
		return false
	}
	return force || p.Decision.Time.Before(s.o.Now().Add(-s.o.BodyRetention))
}

// slim replaces the decided proposal p by its compacted state: the body
// dropped, a digest of the line that held it kept.
func (s *File) slim(p *Proposal) error {
	whole, err := s.full(p)
	if err != nil {
		return err
	}
	full, err := encodeLine(whole)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(full[:len(full)-1])
	c := *whole
	c.Category, c.Source, c.Reason, c.Contact, c.Votes = nil, nil, "", nil, nil
	c.Digest = Optional("sha256:" + hex.EncodeToString(sum[:]))
	c.own()
	line, err := encodeLine(&c)
	if err != nil {
		return err
	}
	c.line = len(line)
	s.put(&c)
	return nil
}

// compact rewrites the file with one line per live proposal, the
// stripped ones' bodies read from the file as it was, one at a time and
// written straight to the new file, and strips every body once its line
// is written: a compaction of a full file holds one body, not the file.
func (s *File) compact() error {
	var f *os.File
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	offs, lens := make([]int64, len(s.order)), make([]int, len(s.order))
	var n int64
	err := safefile.WriteNoFollowFrom(s.path, 0o600, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		for i, id := range s.order {
			p := s.items[id]
			if p.stripped {
				if f == nil {
					var err error
					if f, err = s.openBody(); err != nil {
						return err
					}
				}
				var err error
				if p, err = withBody(f, p.clone()); err != nil {
					return err
				}
			}
			line, err := encodeLine(p)
			if err != nil {
				return err
			}
			offs[i], lens[i] = n, len(line)
			if _, err := bw.Write(line); err != nil {
				return err
			}
			n += int64(len(line))
		}
		return bw.Flush()
	})
	if err != nil {
		return fmt.Errorf("rewriting the proposals file %s: %w", s.path, err)
	}
	for i, id := range s.order {
		next := stripped(s.items[id], offs[i])
		next.off, next.line, next.bodyLine = offs[i], lens[i], lens[i]
		s.items[id] = next
	}
	s.lines, s.size, s.live = len(s.order), n, n
	return nil
}

func encodeLine(p *Proposal) ([]byte, error) {
	// The generated encoder writes the schema's order, indented; a line
	// of the file is that, compacted.
	var b bytes.Buffer
	if err := json.Compact(&b, gen.EncodeProposalRecord(&p.ProposalRecord)); err != nil {
		return nil, err
	}
	line := b.Bytes()
	if len(line) > MaxLine {
		return nil, fmt.Errorf("the proposal would take %d bytes, more than the %d a proposal may", len(line), MaxLine)
	}
	return append(line, '\n'), nil
}

// write appends p's new state and, once it holds, makes it p's state.
// When the line would take the file past its cap, the file is compacted
// first, decided proposals losing their bodies; a new proposal that
// still has no room is refused (ErrCapped). A vote or a decision is
// written even then, so the curator can always decide: the file is at
// most one line past the cap, until the next compaction.
func (s *File) write(p *Proposal, isNew bool) error {
	line, err := encodeLine(p)
	if err != nil {
		return err
	}
	if s.size+int64(len(line)) > s.o.MaxBytes {
		// Rewrite only when that frees room: at the cap with pending
		// proposals alone, each refusal would otherwise rewrite the file.
		if err := s.tidyFile(true); err != nil {
			return err
		}
		if isNew && s.size+int64(len(line)) > s.o.MaxBytes {
			return ErrCapped
		}
	}
	if err := appendLine(s.path, s.size, line); err != nil {
		return err
	}
	p.line = len(line)
	s.put(stripped(p, s.size))
	s.lines++
	s.size += int64(len(line))
	if s.tidy(false) || s.lines > 2*len(s.items)+64 {
		return s.compact()
	}
	return nil
}

// Tidy drops what tidy drops and rewrites the file without it and
// without superseded lines: the server calls it now and then, so that
// bodies are dropped on time on a node that takes no new proposals.
func (s *File) Tidy() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tidyFile(false)
}

// tidyFile tidies (force as tidy takes it) and rewrites the file when
// that, or lines superseded since the last rewrite, left it longer than
// its live proposals: only when the rewrite frees room, so a file at the
// cap with pending proposals alone is not rewritten at every refusal.
func (s *File) tidyFile(force bool) error {
	if s.tidy(force) || s.size != s.live {
		return s.compact()
	}
	return nil
}

// Size is the file's length in bytes, and the cap it is kept within.
func (s *File) Size() (size, max int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size, s.o.MaxBytes
}

// appendLine appends line to the file at path, which must be want bytes
// long, and syncs it; a failed write is cut back.
func appendLine(path string, want int64, line []byte) error {
	err := safefile.AppendAt(path, what, want, func(w io.Writer) error {
		_, err := w.Write(line)
		return err
	})
	if errors.Is(err, safefile.ErrNotAsLeft) {
		return fmt.Errorf("%w; nothing was recorded", err)
	}
	return err
}
