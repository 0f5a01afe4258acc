package proposals

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/atomicfile"
	"github.com/three-good-sources/3gs/internal/filelock"
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
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Store is the proposals file, open for writing by this process alone.
type Store struct {
	path string
	o    Options
	lock *filelock.Lock
	mu   sync.Mutex
	// items are the live proposals by id; order their ids, oldest first.
	items map[string]*Proposal
	order []string
	// lines is how many lines the file holds; size its length.
	lines int
	size  int64
}

// Open takes the lock of the proposals file at path (another process
// holding it is an error wrapping filelock.ErrHeld), reads it, cuts a torn
// last line, drops decided proposals past retention, and returns it ready
// for changes. notes says what was repaired.
func Open(path string, o Options) (*Store, []string, error) {
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	lock, err := filelock.TryLock(path)
	if err != nil {
		return nil, nil, err
	}
	s := &Store{path: path, o: o, lock: lock}
	notes, err := s.load()
	if err != nil {
		lock.Unlock()
		return nil, nil, err
	}
	if s.expire() || s.lines > 0 && s.lines != len(s.items) {
		if err := s.compact(); err != nil {
			lock.Unlock()
			return nil, nil, err
		}
	}
	return s, notes, nil
}

// Close gives up the lock.
func (s *Store) Close() error {
	if s == nil {
		return nil
	}
	return s.lock.Unlock()
}

// Read returns the proposals the file at path holds, oldest first, without
// taking its lock: for a command while a server writes it. A torn last
// line is skipped, not cut.
func Read(path string) ([]*Proposal, error) {
	s := &Store{path: path}
	if _, err := s.read(false); err != nil {
		return nil, err
	}
	out := make([]*Proposal, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.items[id])
	}
	return out, nil
}

func (s *Store) load() ([]string, error) { return s.read(true) }

// read replays the file; with repair it cuts a torn last line.
func (s *Store) read(repair bool) ([]string, error) {
	s.items, s.order, s.lines, s.size = map[string]*Proposal{}, nil, 0, 0
	// The file is 3gs's own: a symbolic link there is refused on every
	// open (read, cut, append, rewrite), never followed.
	if err := safefile.SymlinkProblem(s.path, what); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(s.path, os.O_RDONLY|safefile.OpenFlags|safefile.NoFollow, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		if link := safefile.SymlinkProblem(s.path, what); link != nil {
			return nil, link
		}
		return nil, fmt.Errorf("opening the proposals file: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("the proposals file %s is not a regular file", s.path)
	}
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
				if cerr := atomicfile.CutNoFollow(s.path, what, s.size); cerr != nil {
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
		s.put(p)
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
	return fromRecord(r)
}

// put makes p the state of its id.
func (s *Store) put(p *Proposal) {
	if _, ok := s.items[p.ID]; !ok {
		s.order = append(s.order, p.ID)
	}
	s.items[p.ID] = p
}

// expire drops decided proposals older than retention; it reports
// whether it dropped any.
func (s *Store) expire() bool {
	cutoff := s.o.Now().Add(-s.o.Retention)
	n := len(s.order)
	s.order = slices.DeleteFunc(s.order, func(id string) bool {
		p := s.items[id]
		if p.Decision != nil && p.Decision.Time.Before(cutoff) {
			delete(s.items, id)
			return true
		}
		return false
	})
	return len(s.order) != n
}

// compact rewrites the file with one line per live proposal.
func (s *Store) compact() error {
	var b bytes.Buffer
	for _, id := range s.order {
		line, err := encodeLine(s.items[id])
		if err != nil {
			return err
		}
		b.Write(line)
	}
	if err := atomicfile.WriteNoFollow(s.path, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("rewriting the proposals file %s: %w", s.path, err)
	}
	s.lines, s.size = len(s.order), int64(b.Len())
	return nil
}

func encodeLine(p *Proposal) ([]byte, error) {
	// The generated encoder writes the schema's order, indented; a line
	// of the file is that, compacted.
	var b bytes.Buffer
	if err := json.Compact(&b, gen.EncodeProposalRecord(record(p))); err != nil {
		return nil, err
	}
	line := b.Bytes()
	if len(line) > MaxLine {
		return nil, fmt.Errorf("the proposal would take %d bytes, more than the %d a proposal may", len(line), MaxLine)
	}
	return append(line, '\n'), nil
}

// write appends p's new state and, once it holds, makes it p's state.
func (s *Store) write(p *Proposal) error {
	line, err := encodeLine(p)
	if err != nil {
		return err
	}
	if err := appendLine(s.path, s.size, line); err != nil {
		return err
	}
	s.put(p)
	s.lines++
	s.size += int64(len(line))
	if s.expire() || s.lines > 2*len(s.items)+64 {
		return s.compact()
	}
	return nil
}

// appendLine appends line to the file at path, which must be want bytes
// long, and syncs it; a failed write is cut back.
func appendLine(path string, want int64, line []byte) error {
	err := atomicfile.AppendAtNoFollow(path, what, want, func(w io.Writer) error {
		_, err := w.Write(line)
		return err
	})
	if errors.Is(err, atomicfile.ErrNotAsLeft) {
		return fmt.Errorf("%w; nothing was recorded", err)
	}
	return err
}
