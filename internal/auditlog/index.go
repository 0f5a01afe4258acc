package auditlog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"

	"github.com/three-good-sources/3gs/gen"
)

// Index is where each entry of one log file starts, and which entries
// carry each slug and action, so that a page (Index.ReadPage) reads only
// the lines it returns: a filtered query for a slug no entry has costs a
// map lookup, not a pass over the whole log, and a page from since=N
// starts at N. Each line is read and decoded once, when the index first
// reaches it; a 100,000-entry log takes about 2 MB.
//
// The zero Index is empty and ready. It holds to the rules ReadPage
// does: lines up to the head served never change (the editor only appends
// after it), so an index built up to one head is good for every later
// one; a file that is another file (replaced, renamed over) starts the
// index again.
type Index struct {
	mu      sync.Mutex
	path    string
	file    fs.FileInfo // the file indexed, for os.SameFile
	last    string      // the hash of the last line indexed
	ends    []int64     // ends[k]: the offset just past seq k+1's newline
	slugs   map[string][]int32
	actions map[string][]int32
}

// ReadPage is ReadPage through the index: the same page, reading only
// the lines of the entries it returns (and one more, to know a next page
// exists) and the head's line.
func (ix *Index) ReadPage(path string, q Query, upTo int) (*Page, error) {
	q = q.normal()
	page := &Page{}
	if upTo <= 0 {
		return page, nil
	}
	f, st, err := openForPage(path, upTo)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ends, seqs, err := ix.upTo(path, f, st, upTo, q)
	if err != nil {
		return nil, err
	}
	line := func(seq int) ([]byte, error) {
		from := int64(0)
		if seq > 1 {
			from = ends[seq-2]
		}
		b := make([]byte, ends[seq-1]-from)
		if _, err := f.ReadAt(b, from); err != nil {
			return nil, fmt.Errorf("audit log seq %d: %w", seq, err)
		}
		return b[:len(b)-1], nil
	}
	head, err := line(upTo)
	if err != nil {
		return nil, err
	}
	page.Head = Head{Seq: upTo, Hash: HashLine(head)}
	for _, seq := range seqs {
		l, err := line(seq)
		if err != nil {
			return nil, err
		}
		if full, err := q.add(page, seq, l, false); err != nil {
			return nil, err
		} else if full {
			break
		}
	}
	return page, nil
}

// upTo brings the index up to seq upTo of the file f (at path, st) and
// returns the line ends and the seqs after q.Since, up to upTo, that may
// match q, in order.
func (ix *Index) upTo(path string, f *os.File, st fs.FileInfo, upTo int, q Query) ([]int64, []int, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.path != path || ix.file == nil || !os.SameFile(ix.file, st) || !ix.lastHolds(f) {
		ix.path, ix.file, ix.ends, ix.last = path, st, nil, ""
		ix.slugs, ix.actions = map[string][]int32{}, map[string][]int32{}
	}
	if err := ix.extend(f, upTo); err != nil {
		// What was read before the failure stays good; nothing after it
		// was added.
		return nil, nil, err
	}
	var seqs []int
	pick := func(list []int32) {
		i, _ := slices.BinarySearch(list, int32(q.Since+1))
		for _, s := range list[i:] {
			if int(s) > upTo {
				break
			}
			seqs = append(seqs, int(s))
		}
	}
	switch {
	case q.Slug != "" && (q.Action == "" || len(ix.slugs[q.Slug]) <= len(ix.actions[q.Action])):
		pick(ix.slugs[q.Slug])
	case q.Action != "":
		pick(ix.actions[q.Action])
	default:
		for s := q.Since + 1; s <= upTo && len(seqs) <= q.Limit; s++ {
			seqs = append(seqs, s)
		}
	}
	return ix.ends[:upTo], seqs, nil
}

// lastHolds reports whether f still holds the last line indexed where the
// index has it: a file written anew under the same inode (a restore, an
// editor saving in place) starts the index again rather than being read
// at offsets that no longer fit it.
func (ix *Index) lastHolds(f *os.File) bool {
	n := len(ix.ends)
	if n == 0 {
		return true
	}
	from := int64(0)
	if n > 1 {
		from = ix.ends[n-2]
	}
	b := make([]byte, ix.ends[n-1]-from)
	if _, err := f.ReadAt(b, from); err != nil || b[len(b)-1] != '\n' {
		return false
	}
	return HashLine(b[:len(b)-1]) == ix.last
}

// extend reads the lines after those indexed, up to seq upTo.
func (ix *Index) extend(f *os.File, upTo int) error {
	n := len(ix.ends)
	if n >= upTo {
		return nil
	}
	from := int64(0)
	if n > 0 {
		from = ix.ends[n-1]
	}
	br := bufio.NewReaderSize(io.NewSectionReader(f, from, MaxSize-from), MaxLine+1)
	at := from
	for seq := n + 1; seq <= upTo; seq++ {
		line, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return fmt.Errorf("audit log seq %d: the line is longer than %d bytes, which no entry is", seq, MaxLine)
		case err == io.EOF:
			return fmt.Errorf("the audit log ends at seq %d, before seq %d, the head served: it was cut after the server opened it", seq-1, upTo)
		case err != nil:
			return err
		}
		at += int64(len(line))
		e, err := gen.DecodeAuditEntry(line[:len(line)-1])
		if err != nil {
			return fmt.Errorf("audit log seq %d: not an audit entry: %w", seq, err)
		}
		if e.Seq != seq {
			return fmt.Errorf("audit log seq %d: the line holds seq %d: the file was changed after the server opened it", seq, e.Seq)
		}
		ix.ends = append(ix.ends, at)
		ix.last = HashLine(line[:len(line)-1])
		if e.Slug != nil {
			ix.slugs[*e.Slug] = append(ix.slugs[*e.Slug], int32(seq))
		}
		ix.actions[string(e.Action)] = append(ix.actions[string(e.Action)], int32(seq))
	}
	return nil
}
