package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/strictjson"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// editable serves a writable copy of our registry, as `3gs serve
// --registry` does, with an optional curator key.
func editable(t testing.TB, key []byte) (*Handlers, string) {
	t.Helper()
	return editableFor(t, key, signature.DefaultValidity)
}

// editableFor is editable with the curator's signature made for span (as
// 3gs sign --expires), the span a server keeps when it signs again.
func editableFor(t testing.TB, key []byte, span time.Duration) (*Handlers, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "registry.json")
	data := frozen.Registry(frozen.Basic)
	var doc []byte
	if key != nil {
		data = testkit.WithCurator(data, curatorkey.URI(curatorkey.Public(key)))
		now := time.Now()
		doc = signature.SignWith(data, key, now, signature.Options{Expires: now.Add(span)})
		os.WriteFile(path+signature.Suffix, doc, 0o644)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	h, _ := serving(t, data, doc, Config{Edit: editConfig(path, key)})
	return h, path
}

// editConfig edits the registry at path as a server does, signing with
// key (nil: none), with the log beside it and a fixed clock.
func editConfig(path string, key []byte) *EditConfig {
	return &EditConfig{Path: path, Key: key, AuditLog: path + ".audit.jsonl",
		Now: func() time.Time { return time.Date(2026, 12, 24, 12, 0, 0, 0, time.UTC) }}
}

// reopen serves the registry at path as it is on disk now, as a server
// that starts on it does, with an optional curator key.
func reopen(t testing.TB, path string, key ...[]byte) (*Handlers, *registry.Registry) {
	t.Helper()
	data, doc, err := signature.ReadSigned(path, registry.MaxSize)
	if err != nil {
		t.Fatal(err)
	}
	var k []byte
	if len(key) > 0 {
		k = key[0]
	}
	return serving(t, data, doc, Config{Edit: editConfig(path, k)})
}

var admin = auth.WithCaller(context.Background(), auth.Caller{Name: "root", Presented: true})

func registryUpdated(t *testing.T) string {
	reg, err := registry.Load(frozen.Registry(frozen.Basic))
	if err != nil {
		t.Fatal(err)
	}
	return reg.Updated()
}

// upsertSQLite upserts sqlite-learning under each name in turn, failing
// the test on an error.
func upsertSQLite(t testing.TB, h *Handlers, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := trySQLite(h, name); err != nil {
			t.Fatal(err)
		}
	}
}

// trySQLite upserts sqlite-learning named name as an admin.
func trySQLite(h *Handlers, name string) (*gen.UpsertCategoryOutput, error) {
	return h.UpsertCategory(admin, &gen.UpsertCategoryInput{Slug: "sqlite-learning", Category: sqlite(name)})
}

func sqlite(name string) gen.Category {
	return gen.Category{
		Name: name, Description: "Using SQLite, the embedded SQL database.",
		QueryPatterns: []string{"learn sqlite", "sqlite tutorial", "embedded sql database"},
		Sources: []gen.Source{
			{Rank: 1, Name: "SQLite documentation", URL: "https://sqlite.org/docs.html", Type: "documentation", Why: "Its authors explain every feature."},
			{Rank: 2, Name: "SQLite Tutorial", URL: "https://www.sqlitetutorial.net/", Type: "tutorial", Why: "Works through SQL with SQLite step by step."},
			{Rank: 3, Name: "SQLite Forum", URL: "https://sqlite.org/forum/", Type: "forum", Why: "Where the developers answer questions."},
		},
	}
}

func TestUpsertThenFind(t *testing.T) {
	h, path := editable(t, nil)
	if _, err := h.GetSources(context.Background(), &gen.GetSourcesInput{Query: ptr("learn sqlite")}); err == nil {
		t.Fatal("sqlite matched before it was added")
	}
	out, err := trySQLite(h, "Learning SQLite")
	if err != nil {
		t.Fatal(err)
	}
	if !out.Created || out.RegistryVersion != "1.1.1" || out.Updated != "2026-12-24" || out.CategoryCount != frozen.BasicCategories+1 || out.Signed {
		t.Errorf("upsert result %+v", out)
	}
	found, err := h.GetSources(context.Background(), &gen.GetSourcesInput{Query: ptr("learn sqlite")})
	if err != nil || *found.Slug != "sqlite-learning" || *found.RegistryVersion != "1.1.1" {
		t.Fatalf("after upsert: %v %v", found, err)
	}
	// The file holds the change, loads, and matches the digest reported.
	reg, err := registry.LoadFile(path)
	if err != nil || reg.SHA256() != out.RegistrySHA256 || reg.Version() != "1.1.1" {
		t.Fatalf("file after upsert: %v", err)
	}
	// Replace: same slug, new name; not created.
	out, err = trySQLite(h, "SQLite, learned")
	if err != nil || out.Created || out.RegistryVersion != "1.1.2" || out.CategoryCount != frozen.BasicCategories+1 {
		t.Fatalf("replace: %+v %v", out, err)
	}
	found, _ = h.GetSources(context.Background(), &gen.GetSourcesInput{Query: ptr("learn sqlite")})
	if *found.Name != "SQLite, learned" {
		t.Errorf("replaced category answers as %s", *found.Name)
	}
	// Remove.
	rm, err := h.RemoveCategory(admin, &gen.RemoveCategoryInput{Slug: "sqlite-learning"})
	if err != nil || rm.CategoryCount != frozen.BasicCategories || rm.RegistryVersion != "1.1.3" {
		t.Fatalf("remove: %+v %v", rm, err)
	}
	if _, err := h.GetSources(context.Background(), &gen.GetSourcesInput{Query: ptr("learn sqlite")}); err == nil {
		t.Error("sqlite still matches after removal")
	}
	// Added and removed again, the file is the original but for version
	// and day: the server writes in the curator's layout.
	final, _ := os.ReadFile(path)
	final = bytes.Replace(final, []byte(`"version": "1.1.3"`), []byte(`"version": "1.1.0"`), 1)
	final = bytes.Replace(final, []byte(`"updated": "2026-12-24"`), []byte(`"updated": "`+registryUpdated(t)+`"`), 1)
	if !bytes.Equal(final, frozen.Registry(frozen.Basic)) {
		t.Error("after add and remove the file differs from the original beyond version and day")
	}
	// Every change is in the audit log, after the entry that starts it,
	// chained, with who did it.
	var got []string
	rep, err := auditlog.Read(path+".audit.jsonl", auditlog.Options{Each: func(e *gen.AuditEntry, _ []byte) error {
		slug := ""
		if e.Slug != nil {
			slug = *e.Slug
		}
		got = append(got, string(e.Action)+" "+slug+" "+e.Actor)
		return nil
	}})
	if err != nil || rep.Torn != 0 {
		t.Fatalf("the audit log does not verify: %v (torn %d)", err, rep.Torn)
	}
	if want := "start  cli,upsert sqlite-learning root,upsert sqlite-learning root,remove sqlite-learning root"; strings.Join(got, ",") != want {
		t.Errorf("audit log %q, want %q", strings.Join(got, ","), want)
	}
	onDisk, _ := os.ReadFile(path)
	if sum := sha256.Sum256(onDisk); rep.Last.After != hex.EncodeToString(sum[:]) {
		t.Errorf("the log's last entry records %s, not the registry on disk", rep.Last.After)
	}
}

// A change that breaks a rule is refused with the path inside the
// argument, and nothing changes: the file's bytes, the answers, the log.
func TestInvalidUpsertChangesNothing(t *testing.T) {
	h, path := editable(t, nil)
	before, _ := os.ReadFile(path)
	answer := func() string {
		out, _ := h.GetSources(context.Background(), &gen.GetSourcesInput{Query: ptr("learn rust")})
		b, _ := json.Marshal(out)
		return string(b)
	}
	ans := answer()
	bad := sqlite("Learning SQLite")
	bad.Sources[2].Rank = 1
	bad.Sources[1].URL = bad.Sources[0].URL
	_, err := h.UpsertCategory(admin, &gen.UpsertCategoryInput{Slug: "sqlite-learning", Category: bad})
	var errs strictjson.Errors
	if !errors.As(err, &errs) || len(errs) != 2 || !strings.HasPrefix(errs[0].Path, "category.sources[") {
		t.Fatalf("got %v, want two problems at category.sources[...]", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) || answer() != ans {
		t.Error("a refused change altered the file or the answers")
	}
	if _, err := os.Stat(path + ".audit.jsonl"); !os.IsNotExist(err) {
		t.Error("a refused change was audited")
	}
	// Unknown slug on remove: the argument's path.
	_, err = h.RemoveCategory(admin, &gen.RemoveCategoryInput{Slug: "nope"})
	if !errors.As(err, &errs) || errs[0].Path != "slug" {
		t.Errorf("remove unknown: %v", err)
	}
	// A failed write (here: the file's directory has gone) leaves what is
	// served as it was and says nothing changed.
	h.node.Editor().Path = filepath.Join(filepath.Dir(path), "gone", "registry.json")
	_, err = trySQLite(h, "Learning SQLite")
	var te *gen.ToolError
	if !errors.As(err, &te) || !strings.Contains(te.Text, "Nothing was changed") || answer() != ans {
		t.Errorf("write failure: %v", err)
	}
	if p, _ := h.GetProvenance(context.Background(), nil); p.Version != "1.1.0" || p.CategoryCount != frozen.BasicCategories {
		t.Errorf("after a failed write the server serves %s with %d categories", p.Version, p.CategoryCount)
	}
}

// A failed audit write refuses the change before anything is written:
// nothing happens untraced.
func TestAuditFailureRefusesTheChange(t *testing.T) {
	h, path := editable(t, nil)
	before, _ := os.ReadFile(path)
	h.node.Editor().AuditLog = filepath.Join(path, "not-a-dir", "audit.jsonl") // cannot be created
	_, err := trySQLite(h, "Learning SQLite")
	var te *gen.ToolError
	if !errors.As(err, &te) || !strings.Contains(te.Text, "audit log") {
		t.Fatalf("got %v", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("the file kept a change whose audit entry failed")
	}
	if _, err := h.GetSources(context.Background(), &gen.GetSourcesInput{Query: ptr("learn sqlite")}); err == nil {
		t.Error("the change is served")
	}
}

func TestReload(t *testing.T) {
	h, path := editable(t, nil)
	good, _ := os.ReadFile(path)
	// A broken file: the old snapshot stays, and every problem has a path.
	broken := bytes.Replace(good, []byte(`"rank": 2`), []byte(`"rank": 7`), 1)
	broken = bytes.Replace(broken, []byte(`"https://`), []byte(`"ftp://`), 1)
	os.WriteFile(path, broken, 0o644)
	_, err := h.ReloadRegistry(admin, &gen.ReloadRegistryInput{})
	var te *gen.ToolError
	if !errors.As(err, &te) {
		t.Fatalf("got %v", err)
	}
	out := te.Structured.(*gen.ReloadRegistryOutput)
	if out.Reloaded || out.RegistryVersion != "1.1.0" || len(out.Errors) < 2 || out.Errors[0].Path == "" {
		t.Errorf("broken reload: %+v", out)
	}
	for _, e := range out.Errors {
		if !strings.Contains(te.Text, e.Path) {
			t.Errorf("text does not name %s", e.Path)
		}
	}
	if found, err := h.GetSources(context.Background(), &gen.GetSourcesInput{Query: ptr("learn rust")}); err != nil || *found.Slug != "rust-learning" {
		t.Error("the old registry is not served after a failed reload")
	}
	// A good edit made outside the server, but not signed although the
	// registry names a real curator key, is refused like a bad signature:
	// removing registry.json.sig must not let changed bytes in.
	edited := bytes.Replace(good, []byte(`"version": "1.1.0"`), []byte(`"version": "1.2.0"`), 1)
	os.WriteFile(path, edited, 0o644)
	_, err = h.ReloadRegistry(admin, &gen.ReloadRegistryInput{})
	if !errors.As(err, &te) || !strings.Contains(te.Text, "has no signature file "+path+".sig") || !strings.Contains(te.Text, "The registry served before stays") {
		t.Fatalf("unsigned reload: %v", err)
	}
	if p, _ := h.GetProvenance(context.Background(), nil); p.Version != "1.1.0" {
		t.Errorf("an unsigned reload replaced the registry: %s", p.Version)
	}
	// With --allow-unsigned it is picked up.
	h.node.Editor().AllowUnsigned = true
	res, err := h.ReloadRegistry(admin, &gen.ReloadRegistryInput{})
	if err != nil || !res.Reloaded || res.RegistryVersion != "1.2.0" {
		t.Fatalf("reload: %+v %v", res, err)
	}
	if p, _ := h.GetProvenance(context.Background(), nil); p.Version != "1.2.0" {
		t.Errorf("provenance after reload: %s", p.Version)
	}
}

func TestSignedEdits(t *testing.T) {
	key, _ := curatorkey.Generate()
	h, path := editable(t, key)
	out, err := trySQLite(h, "Learning SQLite")
	if err != nil || !out.Signed {
		t.Fatalf("signed upsert: %+v %v", out, err)
	}
	data, doc, err := signature.ReadSigned(path, registry.MaxSize)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signature.Verify(data, doc, curatorkey.Public(key)); err != nil {
		t.Errorf("the re-signed pair does not verify: %v", err)
	}
	if p, _ := h.GetProvenance(context.Background(), nil); !p.Verified || p.RegistrySHA256 != out.RegistrySHA256 {
		t.Errorf("provenance after a signed change: %+v", p)
	}
	// Without the key, a signed registry is not changed: the change would
	// break its signature.
	h.node.Editor().Key = nil
	_, err = trySQLite(h, "Other")
	var te *gen.ToolError
	if !errors.As(err, &te) || !strings.Contains(te.Text, "no curator key") {
		t.Errorf("keyless change of a signed registry: %v", err)
	}
}

// Eight readers per core run while 20 upserts land (run with -race). Each
// read sees one whole snapshot: the version and the category count it
// reports belong together (each upsert adds one category and one patch
// version). Eight per core keep every core reading while the writer
// writes, with the scheduler switching among them, and the writer its
// share: a fixed 50 on a 2-core machine starved it for half a minute.
// Under -short 4 readers run while 5 upserts land: the same checks, in a
// second.
func TestReadersDuringUpserts(t *testing.T) {
	readers, upserts := 8*runtime.GOMAXPROCS(0), 20
	if testing.Short() {
		readers, upserts = 4, 5
	}
	h, _ := editable(t, nil)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 100)
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				p, _ := h.GetProvenance(context.Background(), nil)
				var patch int
				fmt.Sscanf(p.Version, "1.1.%d", &patch)
				if p.CategoryCount != frozen.BasicCategories+patch {
					errs <- fmt.Errorf("torn read: version %s with %d categories", p.Version, p.CategoryCount)
					return
				}
				l, _ := h.ListCategories(context.Background(), nil)
				if n := len(l.Categories); n < frozen.BasicCategories || n > frozen.BasicCategories+upserts {
					errs <- fmt.Errorf("list of %d categories", n)
					return
				}
				if _, err := h.GetSources(context.Background(), &gen.GetSourcesInput{Query: ptr("learn rust")}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range upserts {
		c := sqlite(fmt.Sprintf("Topic %d", i))
		c.QueryPatterns = []string{fmt.Sprintf("topic%d basics", i), "sqlite tutorial", "embedded sql database"}
		if _, err := h.UpsertCategory(admin, &gen.UpsertCategoryInput{Slug: fmt.Sprintf("topic-%d", i), Category: c}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if p, _ := h.GetProvenance(context.Background(), nil); p.CategoryCount != frozen.BasicCategories+upserts || p.Version != fmt.Sprintf("1.1.%d", upserts) {
		t.Errorf("after %d upserts: %s, %d categories", upserts, p.Version, p.CategoryCount)
	}
}

func TestExplainMatch(t *testing.T) {
	h := handlers(t, frozen.Registry(frozen.Basic))
	out, err := h.ExplainMatch(context.Background(), &gen.ExplainMatchInput{Query: "harden my linux server"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Matched == nil || *out.Matched != "linux-server-hardening" || len(out.Candidates) == 0 || len(out.Candidates) > 5 {
		t.Fatalf("explain: %+v", out)
	}
	// The explanation agrees with get_sources.
	found, _ := h.GetSources(context.Background(), &gen.GetSourcesInput{Query: ptr("harden my linux server")})
	if c := out.Candidates[0]; c.Slug != *found.Slug || c.Score != *found.Score || len(c.Words) != 3 || len(c.Fields) == 0 {
		t.Errorf("first candidate %+v, get_sources %s %v", c, *found.Slug, *found.Score)
	}
	text := h.ExplainMatchText(out)
	if !strings.Contains(text, "get_sources answers with: linux-server-hardening") || !strings.Contains(text, "- harden: weight") {
		t.Errorf("text:\n%s", text)
	}
	// The baseline matcher cannot explain: said plainly.
	reg, _ := registry.Load(frozen.Registry(frozen.Basic))
	b := New(Config{Registry: reg, Matcher: matcher.NewBaseline(reg), Threshold: DefaultThreshold})
	_, err = b.ExplainMatch(context.Background(), &gen.ExplainMatchInput{Query: "rust"})
	var te *gen.ToolError
	if !errors.As(err, &te) || !strings.Contains(te.Text, "baseline") {
		t.Errorf("baseline: %v", err)
	}
}

// BenchmarkUpsert measures one whole change of our registry: validate,
// encode, write and fsync, audit and fsync, rebuild the index, swap.
func BenchmarkUpsert(b *testing.B) {
	h, _ := editable(b, nil)
	i := 0
	for b.Loop() {
		if _, err := trySQLite(h, fmt.Sprintf("SQLite %d", i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
