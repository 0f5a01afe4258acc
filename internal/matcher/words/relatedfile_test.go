package words

import (
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/three-good-sources/3gs/internal/execfile"
)

// relatedLines is every line EachRelated gives, joined again as the
// file writes it, read in place or from the executable.
func relatedLines(inPlace bool) []string {
	readRelatedInPlace = inPlace
	defer func() { readRelatedInPlace = false }()
	var lines []string
	EachRelated(func(stem, close, narrow, broad, gloss string) {
		lines = append(lines, strings.Join([]string{stem, close, narrow, broad, gloss}, "|"))
	})
	return lines
}

// TestEachRelatedFromFile checks that reading related.txt from the
// executable gives the lines reading it in place gives, each as Related
// splits it.
func TestEachRelatedFromFile(t *testing.T) {
	if execfile.Open(unsafe.Pointer(unsafe.StringData(relatedList)), len(relatedList)) == nil {
		if execfile.Expected() {
			t.Fatal("related.txt is read in place although the executable can be read as a file")
		}
		t.Skip("related.txt is read in place on this system")
	}
	want, got := relatedLines(true), relatedLines(false)
	if len(got) != len(want) {
		t.Fatalf("%d lines from the file, %d in place", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("line %d: %q from the file, %q in place", i, got[i], want[i])
		}
		stem, _, _ := strings.Cut(want[i], "|")
		close, narrow, broad, gloss, ok := Related(stem)
		if joined := strings.Join([]string{stem, close, narrow, broad, gloss}, "|"); !ok || joined != want[i] {
			t.Fatalf("line %d: %q, Related(%q) gives %q", i, want[i], stem, joined)
		}
	}
}

// memReader reads text as the executable file is read, failing from
// failAt on.
type memReader struct {
	text   string
	failAt int
}

func (r memReader) ReadAt(b []byte, off int64) bool {
	if int(off)+len(b) > r.failAt {
		return false
	}
	return copy(b, r.text[off:]) == len(b)
}

// TestEachRelatedChunks checks eachRelatedFrom's buffer against reading
// in place, on lines longer than a chunk, an empty line, a last line
// without its newline, and a read that fails halfway (the rest is then
// read in place).
func TestEachRelatedChunks(t *testing.T) {
	long := strings.Repeat("word ", relatedChunk/3)
	text := "# comment\nfirst|a b|c||d\nlong|" + long + "|||" + long + "\n\nlast|x|y|z|w"
	collect := func(lines *[]string) func(s, c, n, b, g string) {
		return func(s, c, n, b, g string) {
			*lines = append(*lines, strings.Join([]string{s, c, n, b, g}, "|"))
		}
	}
	var want []string
	for line := range strings.Lines(text) {
		eachRelatedLine(strings.TrimSuffix(line, "\n"), collect(&want))
	}
	if len(want) != 4 {
		t.Fatalf("%d lines in place, want 4", len(want))
	}
	for _, failAt := range []int{len(text), relatedChunk + 100, 10} {
		var got []string
		eachRelatedFrom(memReader{text, failAt}, text, collect(&got))
		if !slices.Equal(got, want) {
			t.Fatalf("failing from %d: %d lines from the reader, %d in place:\n%.200q", failAt, len(got), len(want), got)
		}
	}
}

// BenchmarkEachRelated measures reading the whole list once, as an
// index build does, in place (in-place) and from the executable (file,
// as shipped on Linux): ns/op is one read of all of it, resident-KB how
// much of the list's 1.9 MB the process has mapped after one read that
// followed letting its pages go (execfile.Release).
func BenchmarkEachRelated(b *testing.B) {
	p, size := unsafe.Pointer(unsafe.StringData(relatedList)), len(relatedList)
	if execfile.Open(p, size) == nil {
		b.Skip("the list is read in place on this system")
	}
	for _, mode := range []string{"in-place", "file"} {
		b.Run(mode, func(b *testing.B) {
			readRelatedInPlace = mode == "in-place"
			defer func() { readRelatedInPlace = false }()
			if err := execfile.Release(p, size); err != nil {
				b.Skip(err)
			}
			lines := 0
			count := func(_, _, _, _, _ string) { lines++ }
			EachRelated(count)
			resident, err := execfile.Resident(p, size)
			if err != nil {
				b.Skip(err)
			}
			for b.Loop() {
				EachRelated(count)
			}
			b.ReportMetric(float64(resident)/1024, "resident-KB")
		})
	}
}
