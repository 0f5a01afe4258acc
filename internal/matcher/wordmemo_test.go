package matcher

import (
	"errors"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/three-good-sources/3gs/internal/matcher/words"
	"github.com/three-good-sources/3gs/internal/registry"
)

// memoSets are the shaped evaluation sets' registries and questions, and
// the benchmark mix's, for the word memo's tests.
func memoSets(t testing.TB) map[string]struct {
	reg       *registry.Registry
	questions []string
} {
	sets := map[string]struct {
		reg       *registry.Registry
		questions []string
	}{}
	for _, name := range []string{"dev", "dev2", "dev3", "heldout", "heldout2"} {
		reg, err := registry.LoadFile("testdata/" + name + "/registry.json")
		if err != nil {
			t.Fatal(err)
		}
		var qs []string
		for _, c := range readShaped(t, "testdata/"+name+"/queries.tsv") {
			qs = append(qs, c.query)
		}
		sets[name] = struct {
			reg       *registry.Registry
			questions []string
		}{reg, qs}
	}
	return sets
}

// parsedView is what an analyzed query holds for ranking, without its
// scratch storage.
type parsedView struct {
	Words              []qword
	Seq                []uint8
	Pairs              [][2]uint8
	Total, MaxCoverage float32
	Filter             [16]uint64
	Lookup             []termWord
	CandBuf            []cand
}

func viewOf(p *parsed) parsedView {
	return parsedView{p.words, p.seq, p.pairs, p.total, p.maxCoverage, p.filter, p.lookup, p.candBuf}
}

// parseBoth parses q on the plain path and through the memo and fails
// unless both give the same analysis.
// parseBoth reports whether q parsed the same both ways; it reports a
// difference with t.Errorf, as it may run on goroutines of a test, where
// t.Fatalf may not be called.
func parseBoth(t *testing.T, x *Index, q string, plain, memo *parsed) bool {
	t.Helper()
	errPlain := x.parseWith(q, plain, false)
	errMemo := x.parseWith(q, memo, true)
	if !errors.Is(errMemo, errPlain) {
		t.Errorf("%q: error %v through the memo, %v plain", q, errMemo, errPlain)
		return false
	}
	if errPlain != nil {
		return true
	}
	if a, b := viewOf(memo), viewOf(plain); !reflect.DeepEqual(a, b) {
		t.Errorf("%q: through the memo\n%+v\nplain\n%+v", q, a, b)
		return false
	}
	return true
}

// TestWordMemoIsResolve: every question of the evaluation sets is
// analyzed the same through the word memo, cold, warm, and after the
// other sets' words have turned its slots over, as on the plain path.
func TestWordMemoIsResolve(t *testing.T) {
	for name, set := range memoSets(t) {
		t.Run(name, func(t *testing.T) {
			x := New(set.reg)
			var plain, memo parsed
			for range 2 { // cold, then warm
				for _, q := range set.questions {
					if !parseBoth(t, x, q, &plain, &memo) {
						return
					}
				}
			}
		})
	}
}

// TestWordMemoConcurrent: queries analyzed at once on several goroutines
// through one index's memo equal the plain path (run with -race).
func TestWordMemoConcurrent(t *testing.T) {
	reg, questions := readMix(t)
	x := New(reg)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			var plain, memo parsed
			for i := range questions {
				q := questions[(i*7+g*31)%len(questions)]
				if !parseBoth(t, x, q, &plain, &memo) {
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestWordMemoOwnsItsWords: an entry holds copies of the words, never
// the query that brought them (which would keep it alive).
func TestWordMemoOwnsItsWords(t *testing.T) {
	reg, _ := readMix(t)
	x := New(reg)
	query := strings.Repeat("x", 64) + " sourdough espreso kubernetes k8s"
	var p parsed
	if err := x.parseInto(query, &p); err != nil {
		t.Fatal(err)
	}
	for i := range x.wordMemo {
		e := x.wordMemo[i].Load()
		if e == nil {
			continue
		}
		for _, s := range append([]string{e.raw}, wordStrings(e.words)...) {
			if inside(s, query) {
				t.Fatalf("entry %q holds %q inside the query", e.raw, s)
			}
		}
	}
}

func wordStrings(ws []qword) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.raw, w.stem)
	}
	return out
}

// BenchmarkParse is query analysis alone (the words, their terms and
// weights, before ranking) over the benchmark mix's questions on its
// registry: plain resolves every word each time, memo through the word
// memo (wordmemo.go). memo also reports what the memo then holds: its
// entries and the heap they take per word.
func BenchmarkParse(b *testing.B) {
	reg, questions := readMix(b)
	for _, memo := range []bool{false, true} {
		name := "plain"
		if memo {
			name = "memo"
		}
		b.Run(name, func(b *testing.B) {
			x := New(reg)
			var p parsed
			// The package's own caches and tables, warmed on the
			// plain path, so that the heap measured below grows by
			// the memo alone.
			for _, q := range questions {
				x.parseWith(q, &p, false)
			}
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := x.parseWith(questions[i%len(questions)], &p, memo); err != nil && !errors.Is(err, ErrOnlyStopWords) {
					b.Fatal(err)
				}
			}
			if !memo {
				return
			}
			b.StopTimer()
			p = parsed{}
			runtime.GC()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			n := 0
			for i := range x.wordMemo {
				if x.wordMemo[i].Load() != nil {
					n++
				}
			}
			b.ReportMetric(float64(n), "memo-words")
			b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(n), "memo-B/word")
			runtime.KeepAlive(x)
		})
	}
}

// inside reports whether s's bytes lie within outer's.
func inside(s, outer string) bool {
	if s == "" || outer == "" {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(outer)))
	return lo <= p && p < lo+uintptr(len(outer))
}

// TestQueryWordVectors: what a query word keeps of the word vectors and
// frequencies (through the memo or not) is what the semantic channel,
// queryMeaning and strangers looked up for it: words.Vector of the word
// as typed, the head's vector for a word that meets no term, and sif.
func TestQueryWordVectors(t *testing.T) {
	reg, questions := readMix(t)
	x := New(reg)
	var p parsed
	for _, q := range questions {
		if err := x.parseInto(q, &p); err != nil {
			continue
		}
		for _, w := range p.words {
			meanVec := words.Vector(w.raw)
			if meanVec < 0 && len(w.cands) == 0 {
				meanVec = x.headVector(w.raw)
			}
			if w.vec != words.Vector(w.raw) || !w.generic && w.meanVec != meanVec ||
				w.sifSem != sif(&w, semSIF) || w.sifMeaning != sif(&w, meaningSIF) {
				t.Fatalf("%q: word %q keeps vec %d, meanVec %d, sif %v %v", q, w.raw, w.vec, w.meanVec, w.sifSem, w.sifMeaning)
			}
		}
	}
}

// BenchmarkQueryWordVectors: what the semantic channel, queryMeaning and
// strangers read of each word of a parsed mix question, looked up from
// the word as typed (lookup, as they did) against kept in the query
// word, from the memo (kept).
func BenchmarkQueryWordVectors(b *testing.B) {
	reg, questions := readMix(b)
	x := New(reg)
	var parsedQs []parsed
	for _, q := range questions {
		var p parsed
		if x.parseInto(q, &p) == nil {
			parsedQs = append(parsedQs, p)
		}
	}
	var sink float32
	b.Run("lookup", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			p := &parsedQs[i%len(parsedQs)]
			for j := range p.words {
				w := &p.words[j]
				v := words.Vector(w.raw) // semantic
				m := words.Vector(w.raw) // queryMeaning
				if m < 0 && len(w.cands) == 0 && !w.generic {
					m = x.headVector(w.raw)
				}
				s := words.Vector(w.raw) // strangers
				sink += float32(v+m+s) + sif(w, semSIF) + sif(w, meaningSIF)
			}
		}
	})
	b.Run("kept", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			p := &parsedQs[i%len(parsedQs)]
			for j := range p.words {
				w := &p.words[j]
				sink += float32(w.vec+w.meanVec+w.vec) + w.sifSem + w.sifMeaning
			}
		}
	})
	runtime.KeepAlive(sink)
}

// TestWordMemoBoundsEntries: no entry the evaluation sets' questions
// leave in the memo takes more than maxMemoEntry bytes.
func TestWordMemoBoundsEntries(t *testing.T) {
	for name, set := range memoSets(t) {
		x := New(set.reg)
		var p parsed
		for _, q := range set.questions {
			x.parseInto(q, &p)
		}
		for i := range x.wordMemo {
			if e := x.wordMemo[i].Load(); e != nil && memoBytes(e.raw, e.words) > maxMemoEntry {
				t.Fatalf("%s: entry %q takes %d bytes", name, e.raw, memoBytes(e.raw, e.words))
			}
		}
	}
}

// TestMemoBytesCountsTerms: a word that meets many terms is over the
// bound, one that meets a few is within it.
func TestMemoBytesCountsTerms(t *testing.T) {
	many := make([]cand, maxMemoEntry/int(unsafe.Sizeof(cand{})))
	if n := memoBytes("word", []qword{{raw: "word", stem: "word", cands: many}}); n <= maxMemoEntry {
		t.Errorf("%d terms take %d bytes, within the bound", len(many), n)
	}
	if n := memoBytes("words", []qword{{raw: "words", stem: "word", cands: many[:2]}}); n > maxMemoEntry {
		t.Errorf("2 terms take %d bytes, over the bound", n)
	}
}
