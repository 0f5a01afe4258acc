package words

import (
	"bytes"
	"strings"
	"unsafe"

	"github.com/three-good-sources/3gs/internal/execfile"
)

// EachRelated calls fn with every line of data/related.txt, in the
// file's order: the stem and the four lists Related gives for it. The
// strings are valid only during the call; fn copies what it keeps.
//
// A server reads the list once, when it builds its index, and never
// again: read in place, its 1.9 MB (a sixth of the binary's read-only
// data) stayed resident for the life of the process. So where the
// executable can be read as a file (internal/execfile: Linux) the list
// is read from it, a chunk at a time into one buffer, and its pages in
// memory are never touched; elsewhere, or if that fails, it is read in
// place. BenchmarkEachRelated measures both.
func EachRelated(fn func(stem, close, narrow, broad, gloss string)) {
	if !readRelatedInPlace {
		if f := execfile.Open(unsafe.Pointer(unsafe.StringData(relatedList)), len(relatedList)); f != nil {
			eachRelatedFrom(f, relatedList, fn)
			return
		}
	}
	for line := range strings.Lines(relatedList) {
		eachRelatedLine(strings.TrimSuffix(line, "\n"), fn)
	}
}

// readRelatedInPlace makes EachRelated read the embedded list in place,
// for the benchmark and the test that compare the two ways.
var readRelatedInPlace bool

// relatedChunk is how much of the list EachRelated reads at a time: the
// buffer is garbage once the index is built, and 64 KB is a few dozen
// reads of the 1.9 MB.
const relatedChunk = 64 << 10

// byteReader reads bytes at an offset, as an *execfile.Region does.
type byteReader interface {
	ReadAt(b []byte, off int64) bool
}

// eachRelatedFrom is EachRelated reading text, related.txt, through f.
// Should a read fail, the lines from there on are read in place.
func eachRelatedFrom(f byteReader, text string, fn func(stem, close, narrow, broad, gloss string)) {
	n := len(text)
	buf := make([]byte, relatedChunk)
	held := 0 // bytes at the start of buf: a line not yet complete
	for off := 0; off < n || held > 0; {
		if held == len(buf) { // a line longer than the buffer
			buf = append(buf, make([]byte, len(buf))...)
		}
		k := min(len(buf)-held, n-off)
		if !f.ReadAt(buf[held:held+k], int64(off)) {
			for line := range strings.Lines(text[off-held:]) {
				eachRelatedLine(strings.TrimSuffix(line, "\n"), fn)
			}
			return
		}
		off += k
		data := buf[:held+k]
		for len(data) > 0 {
			end := bytes.IndexByte(data, '\n')
			if end < 0 {
				if off < n {
					break
				}
				end = len(data) // the last line, without a newline
			}
			// A view of the buffer, valid until the next read: what fn
			// keeps, it copies.
			eachRelatedLine(unsafe.String(unsafe.SliceData(data), end), fn)
			data = data[min(end+1, len(data)):]
		}
		held = copy(buf, data)
	}
}

// eachRelatedLine gives fn line, a line of related.txt without its
// newline, unless it is a comment.
func eachRelatedLine(line string, fn func(stem, close, narrow, broad, gloss string)) {
	if strings.HasPrefix(line, "#") {
		return
	}
	fn(splitRelated(line))
}
