package querylog

import (
	"time"

	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/safefile"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func entry(query string, outcome gen.QueryLogOutcome, slug string, score float64) *gen.QueryLog {
	e := &gen.QueryLog{Time: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC), Query: &query, Outcome: outcome, RegistryVersion: "1.0.0"}
	switch outcome {
	case gen.QueryLogOutcomeMatched:
		e.Slug, e.Score = &slug, &score
	case gen.QueryLogOutcomeCandidates:
		e.Candidates = []gen.ScoredSlug{{Slug: slug, Score: score}}
		e.Score = &score
	}
	return e
}

// Concurrent writers leave whole lines only, the file is 0600, and past the
// bound the log rotates to PATH.1 so that neither file outgrows it.
func TestRecordRotatesAndKeepsLinesWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.jsonl")
	const max = 4096
	l, err := Open(path, max, quiet)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				l.Record(entry(strings.Repeat("x", w+i), gen.QueryLogOutcomeNoCandidates, "", 0))
			}
		}()
	}
	wg.Wait()
	l.Close()
	for _, p := range []string{path, path + ".1"} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > max {
			t.Errorf("%s: %d bytes, over the %d bound", p, st.Size(), max)
		}
		if runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", p, st.Mode().Perm())
		}
	}
	entries, problems, err := Read(path)
	if err != nil || len(problems) > 0 {
		t.Fatalf("read: %v %v", err, problems)
	}
	if len(entries) == 0 || len(entries) >= 400 {
		t.Errorf("%d entries after rotation, want some but fewer than all 400 written", len(entries))
	}
}

func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir, 0, quiet); err == nil {
		t.Error("a directory was accepted")
	}
	if runtime.GOOS == "windows" {
		t.Skip("no named pipes in the file system on Windows")
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// No reader: a blocking open would hang here; the non-blocking one
	// fails at once (ENXIO), or opens and is refused as a pipe.
	if _, err := Open(fifo, 0, quiet); err == nil {
		t.Error("a named pipe was accepted")
	}
}

// An existing log others could read is narrowed to 0600 when opened.
func TestOpenNarrowsMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes on Windows")
	}
	path := filepath.Join(t.TempDir(), "q.jsonl")
	os.WriteFile(path, nil, 0o644)
	os.Chmod(path, 0o644)
	l, err := Open(path, 0, quiet)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
}

// A torn last line (a crash mid-write) and a foreign line are skipped with
// their line numbers; the rest is read, the rotated file first.
func TestReadSkipsBadLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.jsonl")
	old := string(Line(entry("old", gen.QueryLogOutcomeNoCandidates, "", 0)))
	cur := string(Line(entry("new", gen.QueryLogOutcomeNoCandidates, "", 0))) +
		`{"time":"2026-11-24T10:00:00Z","outcome":"matched","registry_version":"1","token":"secret"}` + "\n" +
		`{"time":"2026-11-24T10:00:00Z","outc`
	os.WriteFile(path+".1", []byte(old), 0o600)
	os.WriteFile(path, []byte(cur), 0o600)
	entries, problems, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, *e.Query)
	}
	if !slices.Equal(got, []string{"old", "new"}) {
		t.Errorf("entries %v", got)
	}
	if len(problems) != 2 || !strings.Contains(problems[0], "q.jsonl:2: token: unknown field") || !strings.Contains(problems[1], "q.jsonl:3:") {
		t.Errorf("problems %q", problems)
	}
	if _, _, err := Read(t.TempDir()); !errors.Is(err, safefile.ErrNotRegular) {
		t.Errorf("a directory: %v", err)
	}
}

func TestMissesGroupsByClosestCategory(t *testing.T) {
	var log []gen.QueryLog
	add := func(n int, e *gen.QueryLog) {
		for range n {
			log = append(log, *e)
		}
	}
	add(3, entry("Crema  TOO thin", gen.QueryLogOutcomeCandidates, "espresso", 0.2))
	add(1, entry("crema too thin", gen.QueryLogOutcomeCandidates, "espresso", 0.3))
	add(2, entry("portafilter", gen.QueryLogOutcomeCandidates, "espresso", 0.1))
	add(2, entry("sourdough", gen.QueryLogOutcomeMatched, "sourdough", 0.9))    // confident: not a miss
	add(5, entry("bread crumb", gen.QueryLogOutcomeMatched, "sourdough", 0.45)) // low confidence
	add(1, entry("quantum gravity", gen.QueryLogOutcomeNoCandidates, "", 0))    // nothing close
	slug := "espresso"
	log = append(log, gen.QueryLog{Time: time.Time{}, Slug: &slug, Outcome: gen.QueryLogOutcomeSlug, RegistryVersion: "1"})

	groups := Misses(log, 0.6, 0, nil)
	type row struct {
		slug  string
		total int
		first string
		count int
	}
	var got []row
	for _, g := range groups {
		got = append(got, row{g.Slug, g.Total, g.Misses[0].Query, g.Misses[0].Count})
	}
	want := []row{{"espresso", 6, "crema too thin", 4}, {"sourdough", 5, "bread crumb", 5}, {"", 1, "quantum gravity", 1}}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if groups[0].Misses[0].Score != 0.3 {
		t.Errorf("best score %v, want the highest logged, 0.3", groups[0].Misses[0].Score)
	}

	// With a floor of 0.2, "portafilter" (closest espresso at 0.1) has no
	// good home: it joins the queries no category came close to.
	groups = Misses(log, 0.6, 0.2, nil)
	got = got[:0]
	for _, g := range groups {
		got = append(got, row{g.Slug, g.Total, g.Misses[0].Query, g.Misses[0].Count})
	}
	if want := []row{{"sourdough", 5, "bread crumb", 5}, {"espresso", 4, "crema too thin", 4}, {"", 3, "portafilter", 2}}; !slices.Equal(got, want) {
		t.Errorf("with a floor: got %+v\nwant %+v", got, want)
	}

	// Rescored with a registry that now answers "portafilter": it drops off.
	calls := 0
	groups = Misses(log, 0.6, 0, func(q string) (string, float64, bool) {
		calls++
		if q == "portafilter" {
			return "espresso", 0.9, true
		}
		return "espresso", 0.1, false
	})
	if groups[0].Slug != "espresso" || groups[0].Total != 10 || slices.ContainsFunc(groups[0].Misses, func(m Miss) bool { return m.Query == "portafilter" }) {
		t.Errorf("rescored: %+v", groups)
	}
	if calls != 4 { // crema too thin, portafilter, bread crumb, quantum gravity
		t.Errorf("%d rescorings, want one per distinct query (4)", calls)
	}
}
