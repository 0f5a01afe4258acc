package cli

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/fetch"
	"github.com/three-good-sources/3gs/internal/linkcheck"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
	"github.com/three-good-sources/3gs/internal/textnorm"
)

// checkOptions are check's flags.
type checkOptions struct {
	registryFile
	json                          bool
	only                          string
	perHost, concurrency          intFlag
	delay, timeout, maxRetryAfter durationFlag
	healthFile                    string
	apply                         applyOptions
	report                        bool
}

func checkFlags(f *Flags) {
	o := options[checkOptions](f)
	o.registryFile.flags(f, "registry file whose sources to check when no PATH is given; none means the embedded registry.json")
	f.BoolVar(&o.json, "json", "THREEGS_CHECK_JSON", "print the outcome as JSON (schema/sourcehealth.schema.json) instead of a table")
	f.StringVar(&o.only, "only", "THREEGS_CHECK_ONLY", "", "check the sources of this category slug alone")
	f.IntVar(&o.perHost, "per-host", "THREEGS_CHECK_PER_HOST", strconv.Itoa(linkcheck.DefaultPerHost), 1, "most requests in flight to one server at a time: one address (however URLs spell it or name it) and port")
	f.DurationVar(&o.delay, "delay", "THREEGS_CHECK_DELAY", linkcheck.DefaultDelay.String(), "pause between two requests to the same host; 0 for none")
	f.IntVar(&o.concurrency, "concurrency", "THREEGS_CHECK_CONCURRENCY", strconv.Itoa(linkcheck.DefaultConcurrency), 1, "most requests in flight in all")
	f.DurationVar(&o.timeout, "timeout", "THREEGS_CHECK_TIMEOUT", linkcheck.DefaultTimeout.String(), "longest the check of one source may take, its redirects included; a Retry-After wait and the one retry come on top")
	f.StringVar(&o.healthFile, "health-file", "THREEGS_HEALTH_FILE", "", "where to keep the outcome, for the next check (a page's title or size moving far from it is changed), get_sources and /health; none means REGISTRY.health.json beside a registry file (nothing is kept for the embedded registry)")
	applyFlags(f, &o.apply)
	f.BoolVar(&o.report, "report", "THREEGS_CHECK_REPORT", "check nothing: print the curator's to-do list from the last check kept in the health file, most urgent first (gone sources, redirects to apply, failing and changed ones)")
	f.DurationVar(&o.maxRetryAfter, "max-retry-after", "THREEGS_CHECK_MAX_RETRY_AFTER", linkcheck.DefaultMaxRetryAfter.String(), "longest wait a server's Retry-After is honoured with (once per source); a longer one is cut to this")
}

// checkSettings are check's flags, checked.
type checkSettings struct {
	limit                         int64
	perHost, concurrency          int
	delay, timeout, maxRetryAfter time.Duration
}

func parseCheckFlags(o *checkOptions) (checkSettings, error) {
	var s checkSettings
	var err error
	if s.limit, err = registryLimit(o.maxRegistry); err != nil {
		return s, err
	}
	if s.perHost, err = o.perHost.get(); err != nil {
		return s, err
	}
	if s.concurrency, err = o.concurrency.get(); err != nil {
		return s, err
	}
	if s.timeout, err = o.timeout.get(); err != nil {
		return s, err
	}
	if s.maxRetryAfter, err = o.maxRetryAfter.get(); err != nil {
		return s, err
	}
	// --delay may be 0, for none.
	d, derr := time.ParseDuration(o.delay.text)
	if o.delay.text == "0" {
		d, derr = 0, nil
	}
	if derr != nil || d < 0 {
		return s, fmt.Errorf("--delay (THREEGS_CHECK_DELAY) must be a duration such as 1s or 250ms, or 0, got %q", o.delay.text)
	}
	s.delay = d
	return s, nil
}

// runCheck checks every source URL of a registry and prints how each
// fared, grouped by category, with the edit to make for each permanent
// redirect. Exit 0 when nothing is gone or failing, 1 otherwise.
func runCheck(ctx context.Context, env *Env, f *Flags) int {
	o := options[checkOptions](f)
	if len(f.Args()) > 1 {
		return checkFail(env, ExitUsage, "one registry file at a time, got %d arguments", len(f.Args()))
	}
	path := o.registry
	if len(f.Args()) == 1 {
		path = f.Args()[0]
	}
	s, err := parseCheckFlags(o)
	if err != nil {
		return checkFail(env, ExitUsage, "%v", err)
	}
	if o.report {
		return runCheckReport(env, o, path, s.limit)
	}
	if o.apply.on && path == "" {
		return checkFail(env, ExitUsage, "--apply-redirects changes a registry file: name it, e.g. 3gs check --apply-redirects --key-file KEY registry.json (the embedded registry cannot be changed)")
	}
	// The key signs the health file written, and the redirects applied.
	sg := signer{limit: s.limit}
	sg.key, sg.from, err = signingKey(env, o.apply.key, func(msg string) { fmt.Fprintln(env.Stderr, "3gs check: warning:", msg) })
	if err != nil {
		return checkFail(env, ExitUsage, "%v", err)
	}
	if o.apply.on {
		if sg.validity, err = validity(o.apply.expires); err != nil {
			return checkFail(env, ExitUsage, "%v", err)
		}
	}
	reg, source, ok := loadRegistry(env, "check", path, s.limit)
	if !ok {
		return ExitFail
	}
	targets := sourcehealth.Targets(reg)
	if only := o.only; only != "" {
		if _, ok := reg.Category(only); !ok {
			return checkFail(env, ExitUsage, "--only %s: %s has no category %q. Its categories are listed by 3gs query, or in the file under \"categories\".", only, source, only)
		}
		targets = slices.DeleteFunc(targets, func(t linkcheck.Target) bool { return t.Category != only })
	}
	healthPath := o.healthFile
	if healthPath == "" && path != "" {
		healthPath = sourcehealth.PathFor(path)
	}
	var prev *gen.Sourcehealth
	if healthPath != "" {
		if prev, err = sourcehealth.Read(healthPath); err != nil {
			fmt.Fprintf(env.Stderr, "3gs check: warning: %v; checking without it, so no source can be found changed\n", err)
		}
	}
	results := checkSources(ctx, env, reg, targets, s, prev)
	if ctx.Err() != nil {
		return checkFail(env, ExitInterrupted, "interrupted after %d of %d sources", len(results), len(targets))
	}
	if out, down := linkcheck.NetworkDown(results); down {
		// What such a run saw says nothing about the sources: nothing is
		// printed as gone, kept, or applied.
		kept := "no health file was written"
		if healthPath != "" {
			kept = healthPath + " was left as it was"
		}
		return checkFail(env, ExitUnavailable, "the network looks unavailable: %d of %d hosts could not be resolved or connected; nothing was marked gone (%s). Check DNS/connectivity and run again.", out.Failed, out.Hosts, kept)
	}
	doc := sourcehealth.Doc(reg, results, time.Now())
	if o.json {
		env.Stdout.Write(gen.EncodeSourcehealth(doc))
		fmt.Fprintln(env.Stdout)
	} else {
		printCheck(env.Stdout, reg, source, path, doc, o.apply.on)
	}
	code := ExitOK
	if doc.Summary.Gone > 0 || doc.Summary.Error > 0 {
		code = ExitFail
	}
	if o.apply.on {
		stdout := env.Stdout
		if o.json {
			stdout = env.Stderr // stdout holds the JSON document alone
		}
		a := &applier{env: env, stdout: stdout, path: path, signer: sg, o: o.apply}
		applied, ok := a.apply(results)
		if !ok {
			code = ExitFail
		}
		if len(applied) > 0 {
			// The registry now names the new URLs, which answered.
			if reg, err = registry.LoadFileLimit(path, s.limit); err == nil {
				movedTo(doc, applied)
			}
		}
	}
	if healthPath != "" {
		saveHealth(env, healthPath, prev, doc, reg, o.only != "", healthKey(env, reg, sg.key))
	}
	return code
}

// checkFail says what stopped check, and is code.
func checkFail(env *Env, code int, format string, args ...any) int {
	fmt.Fprintf(env.Stderr, "3gs check: "+format+"\n", args...)
	return code
}

// checkSources checks targets, sources of reg, as s says, with progress
// on a terminal.
func checkSources(ctx context.Context, env *Env, reg *registry.Registry, targets []linkcheck.Target, s checkSettings, prev *gen.Sourcehealth) []linkcheck.Result {
	// The registry file is the operator's: its sources may name the
	// literal private addresses its curator chose.
	client := fetch.New(fetch.Options{
		ConnectTimeout: min(s.timeout, fetch.DefaultConnectTimeout),
		HeaderTimeout:  s.timeout,
		UserAgent:      userAgent(reg.Curator().Name),
		Operator:       true,
	})
	progress := progressLine(env.Stderr)
	results := linkcheck.Check(ctx, targets, linkcheck.Options{
		Client: client, Resolver: net.DefaultResolver, PerHost: s.perHost, Delay: s.delay, Concurrency: s.concurrency,
		Timeout: s.timeout, MaxRetryAfter: s.maxRetryAfter,
		Progress: progress.update, Previous: sourcehealth.Previous(prev),
	})
	progress.end()
	return results
}

// movedTo rewrites doc's entries of the applied redirects to the new
// URLs, which answered when checked.
func movedTo(doc *gen.Sourcehealth, applied []redirect) {
	for _, r := range applied {
		for i := range doc.Sources {
			c := &doc.Sources[i]
			if c.Rank == r.rank && c.URL == r.from && c.Status == gen.CheckStatusRedirected {
				c.URL, c.Status, c.Reason, c.Location, c.HttpStatus = r.to, gen.CheckStatusOk, nil, nil, nil
			}
		}
	}
	sourcehealth.Count(doc)
}

// saveHealth writes the outcome to the health file, merged into the
// previous one when only some categories were checked. A server checking
// in the background holds the file; it is then left to it.
func saveHealth(env *Env, path string, prev, doc *gen.Sourcehealth, reg *registry.Registry, partial bool, key ed25519.PrivateKey) {
	lock, err := sourcehealth.Lock(path)
	if err != nil {
		if errors.Is(err, safefile.ErrHeld) {
			fmt.Fprintf(env.Stderr, "3gs check: %s not written: %v, checking the sources itself (serve --check-sources); it keeps the file.\n", path, err)
		} else {
			fmt.Fprintf(env.Stderr, "3gs check: warning: %s not written: %v\n", path, err)
		}
		return
	}
	defer lock.Unlock()
	if partial {
		doc = sourcehealth.Merge(prev, doc, reg)
	}
	p := sourcehealth.Sign(doc, key, time.Now(), sourcehealth.Validity(0))
	if err := sourcehealth.WritePublished(path, p); err != nil {
		fmt.Fprintf(env.Stderr, "3gs check: warning: %s not written: %v\n", path, err)
	}
}

// healthKey is key when it may sign the health file of reg: the key of
// reg's curator, as peers check it (a health file signed by another key
// is refused by every peer); nil, with a warning, otherwise.
func healthKey(env *Env, reg *registry.Registry, key ed25519.PrivateKey) ed25519.PrivateKey {
	if key == nil {
		return nil
	}
	if err := signature.CheckCurator(reg, curatorkey.Public(key)); err != nil {
		fmt.Fprintf(env.Stderr, "3gs check: warning: the health file is written unsigned: %v\n", err)
		return nil
	}
	return key
}

// userAgent names 3gs, its version and the curator whose sources are
// checked, so a site's operator can tell who is asking.
func userAgent(curator string) string { return linkcheck.UserAgent(buildVersion(), curator) }

// printCheck writes the table: each category with a source that is not
// ok, its sources' statuses, then the edits for the permanent redirects.
func printCheck(w io.Writer, reg *registry.Registry, source, path string, doc *gen.Sourcehealth, applying bool) {
	fmt.Fprintf(w, "%s: %d %s checked: %s\n", source, len(doc.Sources), plural(len(doc.Sources), "source", "sources"), sourcehealth.SummaryLine(doc.Summary))
	var edits []string
	for i := 0; i < len(doc.Sources); {
		j := i
		for j < len(doc.Sources) && doc.Sources[j].Category == doc.Sources[i].Category {
			j++
		}
		group := doc.Sources[i:j]
		i = j
		if !slices.ContainsFunc(group, func(c gen.CheckedSource) bool { return c.Status != gen.CheckStatusOk }) {
			continue
		}
		slug := group[0].Category
		name := slug
		if c, ok := reg.Category(slug); ok && c.Name != "" {
			name = slug + " (" + c.Name + ")"
		}
		fmt.Fprintf(w, "\n%s\n", name)
		for _, c := range group {
			fmt.Fprintf(w, "  %d  %-10s  %s\n", c.Rank, c.Status, checkedURL(c))
			if c.Status == gen.CheckStatusRedirected && c.Location != nil && advisable(c.URL, *c.Location) {
				if at := sourceIndex(reg, slug, c.Rank); at >= 0 {
					edits = append(edits, fmt.Sprintf("  categories.%s.sources[%d].url: %s → %s", slug, at, strconv.Quote(c.URL), strconv.Quote(*c.Location)))
				}
			}
		}
	}
	if len(edits) > 0 {
		fmt.Fprintf(w, "\nPermanent redirects: change these URLs in %s to where the sources moved, then sign it again:\n", source)
		for _, e := range edits {
			fmt.Fprintln(w, e)
		}
		if !applying && path != "" {
			fmt.Fprintf(w, "Or let 3gs make these edits, each an audited, signed change: 3gs check --apply-redirects --key-file KEY %s\n", signature.ShellQuote(path))
		}
	}
	if doc.Summary.Gone+doc.Summary.Error > 0 {
		fmt.Fprintln(w, "\nA gone source needs a replacement; an error may pass (run 3gs check again later) or may need one too.")
	}
}

// sourceIndex is the index in its category's sources of the source of
// that rank, -1 when there is none.
func sourceIndex(reg *registry.Registry, slug string, rank int) int {
	c, ok := reg.Category(slug)
	if !ok {
		return -1
	}
	return slices.IndexFunc(c.Sources, func(s gen.Source) bool { return s.Rank == rank })
}

// progress writes "checked 120/480, 3 gone" over itself on a terminal,
// and nothing when stderr is a pipe or a file.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	last  time.Time
	on    bool
	wrote bool
}

func progressLine(w io.Writer) *progress {
	return &progress{w: w, on: isTerminal(w)}
}

func (p *progress) update(done, total int, counts map[linkcheck.Status]int) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if now := time.Now(); done < total && now.Sub(p.last) < 100*time.Millisecond {
		return
	} else {
		p.last = now
	}
	line := fmt.Sprintf("checked %d/%d", done, total)
	for _, st := range []linkcheck.Status{linkcheck.Gone, linkcheck.Error, linkcheck.Redirected, linkcheck.Changed} {
		if n := counts[st]; n > 0 {
			line += fmt.Sprintf(", %d %s", n, st)
		}
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s", line)
	p.wrote = true
}

func (p *progress) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.wrote {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// isTerminal reports whether w, a reader or writer, is a terminal: a
// character device other than the null device.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

// checkedURL is a checked source's URL as the tables show it: with where
// it now leads, or why it failed.
func checkedURL(c gen.CheckedSource) string {
	switch {
	case c.Location != nil: // the source's server chose it
		return c.URL + " → " + textnorm.Terminal(*c.Location)
	case c.Reason != nil:
		return c.URL + " (" + textnorm.Terminal(*c.Reason) + ")"
	}
	return c.URL
}
