// Package registry loads registry.json into an immutable snapshot.
//
// Loading is the generated strict decoder (every schema rule, with paths)
// followed by the rules a JSON Schema cannot state: the three ranks are
// exactly 1, 2 and 3; no URL appears twice in a category; every query
// pattern keeps at least one searchable word after normalization; every
// public key is a real Ed25519 key in canonical z-base-32, no endorser
// is listed twice, the curator's links are https and listed once
// (links.go), and no string holds a control or format character
// (hygiene.go). All
// problems are reported together, so a curator fixes a file in one round.
package registry

import (
	"github.com/three-good-sources/3gs/internal/safefile"

	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/strictjson"
	"github.com/three-good-sources/3gs/internal/textnorm"
)

// Registry is a loaded, validated registry. It is never modified after Load
// returns, so any number of requests may read it at once; a registry change
// produces a new Registry.
type Registry struct {
	doc        gen.Registry
	categories []Category // sorted by slug
	data       []byte
	sha256     string
	warnings   strictjson.Errors // see Warnings
}

// Category is one topic with its slug. Callers must not modify it.
type Category struct {
	Slug string
	*gen.Category
}

// MaxSize is the default bound on a registry file, which every command
// that reads one lets --max-registry-bytes change. A file is read whole
// and kept in memory while it is served, so the bound is what keeps load
// time and memory in proportion to what the operator expects. It is
// 256 MiB, room for 100,000 categories: at the size curators write them
// (1.4 KB each in registry.json; registrytest's 1.5 KB, 154 MB in all),
// half as much again is 231 MB, rounded up.
const MaxSize = 256 << 20

// Load validates data and returns the snapshot, or a strictjson.Errors that
// lists every problem found. It checks no size: data is in memory already,
// and whoever read it bounded the read (LoadFileLimit, a peer fetcher's
// limit). Bytes this process made itself go through LoadLimit.
//
// The snapshot keeps data as the registry's exact bytes (Bytes), and its
// strings point into data rather than into a copy, which would double the
// memory a large registry takes: the caller must not change data after.
func Load(data []byte) (*Registry, error) {
	// The digest is taken on another core while the document is decoded:
	// at 150 MB it is a tenth of a second that need not wait.
	digest := make(chan [sha256.Size]byte, 1)
	go func() { digest <- sha256.Sum256(data) }()
	doc, err := gen.DecodeRegistryInPlace(data)
	var errs strictjson.Errors
	if err != nil && !errors.As(err, &errs) {
		return nil, err
	}
	if doc == nil { // not JSON at all: nothing further to check
		// A person edits a registry: where the JSON breaks is told as a
		// line and column, with the text there.
		return nil, strictjson.WithPosition(errs, data)
	}
	slugs, rules, warnings := checkRules(doc)
	errs = append(errs, rules...)
	if len(errs) > 0 {
		return nil, errs
	}
	sum := <-digest
	// The categories are kept once, in one array sorted by slug, and found
	// by binary search: the decoded map, a copy of each category and a map
	// by slug beside them took about 35 MB at 100,000 categories, live for
	// as long as the registry is served. Document rebuilds the map.
	r := &Registry{doc: *doc, data: data, sha256: hex.EncodeToString(sum[:]), warnings: warnings}
	r.doc.Categories = nil
	cats := make([]gen.Category, len(slugs))
	r.categories = make([]Category, len(slugs))
	// On every core, as checkRules does: one pass of map lookups was
	// about 70 ms of a 100,000-category start, with nothing else to do.
	var wg sync.WaitGroup
	for _, run := range runs(len(slugs)) {
		wg.Go(func() {
			for i := run[0]; i < run[1]; i++ {
				slug := slugs[i]
				cats[i] = doc.Categories[slug]
				slices.SortFunc(cats[i].Sources, func(a, b gen.Source) int { return a.Rank - b.Rank })
				r.categories[i] = Category{Slug: slug, Category: &cats[i]}
			}
		})
	}
	wg.Wait()
	return r, nil
}

// LoadLimit is Load for bytes that must also fit the limit max: a registry
// a curator tool or 3gs endorse is about to write, which the next start
// has to be able to read.
// A registry over the limit is a *TooLargeError.
func LoadLimit(data []byte, max int64) (*Registry, error) {
	if int64(len(data)) > max {
		return nil, &TooLargeError{Size: int64(len(data)), Limit: max}
	}
	return Load(data)
}

// TooLargeError is a registry of Size bytes, more than Limit, the most
// the next start reads. The adapters name the setting that raises it.
type TooLargeError struct{ Size, Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("registry is %d bytes, more than the %d-byte limit", e.Size, e.Limit)
}

// LoadFile reads and loads the registry at path, of at most MaxSize bytes.
func LoadFile(path string) (*Registry, error) {
	return LoadFileLimit(path, MaxSize)
}

// LoadFileLimit reads and loads the registry at path, of at most max
// bytes. A larger file is refused before it is read, with an error that
// wraps safefile.ErrTooLarge.
func LoadFileLimit(path string, max int64) (*Registry, error) {
	data, err := safefile.Read(path, max, "registry")
	if err != nil {
		return nil, err
	}
	return Load(data)
}

// checkRules applies the rules beyond the schema. It runs on whatever the
// decoder managed to fill, so it only judges values the schema accepted
// (a rank outside 1..3 is already reported; here it is skipped). It also
// returns the warnings Warnings reports, found while each URL is parsed
// once, and the slugs in order, which it sorts to report in that order.
func checkRules(doc *gen.Registry) (slugs []string, errs, warnings strictjson.Errors) {
	fail := func(path, reason string) { errs = append(errs, &strictjson.Error{Path: path, Reason: reason}) }
	warn := func(path string, u *url.URL) {
		if u == nil {
			return
		}
		if why := hostConcern(u); why != "" {
			warnings = append(warnings, &strictjson.Error{Path: path, Reason: why})
		}
	}
	if k := doc.Curator.Pubkey; k != Placeholder {
		checkKey(k, "curator.pubkey", fail)
	}
	checkName("curator.name", doc.Curator.Name, fail)
	// Every string is checked for hidden characters (checkText), once:
	// names and URLs by checkName and checkURL, the rest here. Those the
	// schema holds to a pattern cannot hold one, but a pass over a few
	// bytes costs less than an argument about which patterns do.
	checkText("version", doc.Version, fail)
	checkText("updated", doc.Updated, fail)
	checkText("curator.pubkey", doc.Curator.Pubkey, fail)
	checkLinks(doc.Curator.Links, fail, warn)
	endorsedBy := map[string]int{}
	for i, e := range doc.Endorsements {
		p := "endorsements[" + strconv.Itoa(i) + "].pubkey"
		checkText(p, e.Pubkey, fail)
		checkText("endorsements["+strconv.Itoa(i)+"].since", e.Since, fail)
		checkKey(e.Pubkey, p, fail)
		if e.Name != nil {
			checkName("endorsements["+strconv.Itoa(i)+"].name", *e.Name, fail)
		}
		up := "endorsements[" + strconv.Itoa(i) + "].url"
		warn(up, checkURL(up, e.URL, fail))
		if j, dup := endorsedBy[e.Pubkey]; dup && e.Pubkey != "" {
			fail(p, fmt.Sprintf("same key as endorsements[%d]; list each endorser once", j))
		} else {
			endorsedBy[e.Pubkey] = i
		}
	}
	slugs = sortedSlugs(doc)
	// Categories are checked on every core, each a run of slugs, and
	// their findings joined in slug order, so the report reads the same
	// as one pass; at 100,000 categories one pass took a third of a load.
	parts := runs(len(slugs))
	found := make([]struct{ errs, warnings strictjson.Errors }, len(parts))
	var wg sync.WaitGroup
	for i, r := range parts {
		wg.Go(func() {
			for _, slug := range slugs[r[0]:r[1]] {
				found[i].errs, found[i].warnings = checkCategory(slug, doc.Categories[slug], found[i].errs, found[i].warnings)
			}
		})
	}
	wg.Wait()
	for _, f := range found {
		errs, warnings = append(errs, f.errs...), append(warnings, f.warnings...)
	}
	return slugs, errs, warnings
}

// sortedSlugs are doc's category slugs in order: each run of them (runs)
// sorted on a core of its own, then merged. Sorted on one core, the
// 100,000 slugs of a large registry were about 40 ms of its start with
// the other core idle.
func sortedSlugs(doc *gen.Registry) []string {
	slugs := make([]string, 0, len(doc.Categories))
	for slug := range doc.Categories {
		slugs = append(slugs, slug)
	}
	parts := runs(len(slugs))
	var wg sync.WaitGroup
	for _, r := range parts {
		wg.Go(func() { slices.Sort(slugs[r[0]:r[1]]) })
	}
	wg.Wait()
	return mergeRuns(slugs, parts)
}

// mergeRuns merges the sorted runs of s (consecutive, covering it),
// two at a time, until one is left.
func mergeRuns(s []string, parts [][2]int) []string {
	if len(parts) < 2 {
		return s
	}
	buf := make([]string, len(s))
	for len(parts) > 1 {
		var next [][2]int
		for i := 0; i < len(parts); i += 2 {
			a := parts[i]
			if i+1 == len(parts) {
				copy(buf[a[0]:a[1]], s[a[0]:a[1]])
				next = append(next, a)
				continue
			}
			b := parts[i+1]
			merge(buf[a[0]:b[1]], s[a[0]:a[1]], s[b[0]:b[1]])
			next = append(next, [2]int{a[0], b[1]})
		}
		s, buf, parts = buf, s, next
	}
	return s
}

// merge writes the sorted a and b, merged, into dst (len(a)+len(b) long).
func merge(dst, a, b []string) {
	i, j := 0, 0
	for k := range dst {
		if j == len(b) || i < len(a) && a[i] <= b[j] {
			dst[k] = a[i]
			i++
		} else {
			dst[k] = b[j]
			j++
		}
	}
}

// runs cuts n items into one run [from, to) per core, none for n = 0, and
// one alone for a registry too small to gain from more.
func runs(n int) [][2]int {
	k := runtime.GOMAXPROCS(0)
	if n < 2000 {
		k = 1
	}
	var out [][2]int
	for i := range k {
		if from, to := i*n/k, (i+1)*n/k; from < to {
			out = append(out, [2]int{from, to})
		}
	}
	return out
}

// checkCategory appends the problems and warnings of one category.
func checkCategory(slug string, c gen.Category, errs, warnings strictjson.Errors) (strictjson.Errors, strictjson.Errors) {
	fail := func(path, reason string) { errs = append(errs, &strictjson.Error{Path: path, Reason: reason}) }
	// Paths are written only for a problem: building them for every
	// source was 30 MB of garbage at 100,000 categories.
	base := func() string { return "categories." + slug }
	if why := textProblem(slug); why != "" {
		fail("categories", why) // the key; its pattern is ASCII
	}
	if why := nameProblem(c.Name); why != "" {
		fail(base()+".name", why)
	}
	if why := textProblem(c.Description); why != "" {
		fail(base()+".description", why)
	}
	rankAt := map[int]int{}
	urlAt := map[string]int{}
	for i, s := range c.Sources {
		sp := func() string { return base() + ".sources[" + strconv.Itoa(i) + "]" }
		if why := nameProblem(s.Name); why != "" {
			fail(sp()+".name", why)
		}
		if why := textProblem(s.Why); why != "" {
			fail(sp()+".why", why)
		}
		// A plain URL (strictjson.PlainURL), as most are, passes checkURL
		// as written and is its own urlKey but for a trailing slash: it
		// is not parsed (url.Parse was a tenth of a load at 100,000
		// categories, and most of its garbage).
		var key, concern string
		parsed := false
		if host, plain := strictjson.PlainURL(s.URL); plain {
			parsed, key, concern = true, strings.TrimSuffix(s.URL, "/"), hostConcernOf(host)
		} else if u := checkURL(sp()+".url", s.URL, fail); u != nil {
			parsed, key, concern = true, urlKey(u), hostConcern(u)
		}
		if concern != "" {
			warnings = append(warnings, &strictjson.Error{Path: sp() + ".url", Reason: concern})
		}
		if s.Rank >= 1 && s.Rank <= 3 {
			if j, dup := rankAt[s.Rank]; dup {
				fail(sp()+".rank", fmt.Sprintf("rank %d is already used by sources[%d]; the three sources must be ranked 1, 2 and 3", s.Rank, j))
			} else {
				rankAt[s.Rank] = i
			}
		}
		if parsed {
			if j, dup := urlAt[key]; dup {
				fail(sp()+".url", fmt.Sprintf("same URL as sources[%d]; each source must point somewhere different", j))
			} else {
				urlAt[key] = i
			}
		}
	}
	for i, p := range c.QueryPatterns {
		if why := textProblem(p); why != "" {
			fail(base()+".query_patterns["+strconv.Itoa(i)+"]", why)
			continue
		}
		if p != "" && !textnorm.HasTokens(p) {
			fail(base()+".query_patterns["+strconv.Itoa(i)+"]", "has no searchable words once stop words and punctuation are removed; write it the way a user would ask about this topic")
		}
	}
	return errs, warnings
}

// checkKey reports a key that has the form the schema asks for (so the
// schema has not already reported it) but is still not an Ed25519 public
// key: a non-canonical last character, or bytes off the curve.
func checkKey(k, path string, fail func(path, reason string)) {
	if len(k) != len(curatorkey.Prefix)+curatorkey.EncodedLen || !strings.HasPrefix(k, curatorkey.Prefix) {
		return
	}
	if _, err := curatorkey.ParsePublicKey(k); err != nil {
		fail(path, err.Error())
	}
}

// urlKey normalizes what does not change where a URL leads: the case of
// scheme and host, and a trailing slash.
func urlKey(parsed *url.URL) string {
	u := *parsed
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u.String()
}

// Document returns a copy of the decoded document that may be changed and
// loaded again: its categories map is the copy's own. Categories themselves
// are shared, so replace a category rather than modifying it.
func (r *Registry) Document() gen.Registry {
	doc := r.doc
	doc.Categories = make(map[string]gen.Category, len(r.categories))
	for _, c := range r.categories {
		doc.Categories[c.Slug] = *c.Category
	}
	doc.Endorsements = slices.Clone(r.doc.Endorsements)
	return doc
}

// Version is the registry content version.
func (r *Registry) Version() string { return r.doc.Version }

// Updated is the day of the last content change.
func (r *Registry) Updated() string { return r.doc.Updated }

// Curator is who answers for the content.
func (r *Registry) Curator() gen.Curator { return r.doc.Curator }

// Endorsements are other curators' endorsements, in file order.
func (r *Registry) Endorsements() []gen.Endorsement { return r.doc.Endorsements }

// Categories returns every category sorted by slug. Callers must not modify it.
func (r *Registry) Categories() []Category { return r.categories }

// Category returns the category with this slug.
func (r *Registry) Category(slug string) (*Category, bool) {
	i, ok := slices.BinarySearchFunc(r.categories, slug, func(c Category, slug string) int { return strings.Compare(c.Slug, slug) })
	var c *Category
	if ok {
		c = &r.categories[i]
	}
	return c, ok
}

// SHA256 is the hex SHA-256 of the exact bytes loaded.
func (r *Registry) SHA256() string { return r.sha256 }

// Size is the length in bytes of the file loaded.
func (r *Registry) Size() int { return len(r.data) }

// Bytes are the exact bytes loaded: what the SHA-256 and any signature
// cover. Callers must not modify them.
func (r *Registry) Bytes() []byte { return r.data }

// Placeholder is the curator key of a registry whose curator has no key
// yet. Such a registry is served unsigned and cannot be signed.
const Placeholder = "pk:placeholder"

// CuratorKey is the curator's public key, or false for the placeholder.
// Load has checked that any other value is a valid PKARR key.
func (r *Registry) CuratorKey() (ed25519.PublicKey, bool) {
	if r.doc.Curator.Pubkey == Placeholder {
		return nil, false
	}
	k, err := curatorkey.ParsePublicKey(r.doc.Curator.Pubkey)
	return k, err == nil
}

// CheckCategory applies the rules beyond the schema to one category,
// slug, on its own: what Load would find in it, and the warnings Warnings
// would give, with paths under at ("category.sources[1].url" for at
// "category") instead of "categories.SLUG". The rules are each category's
// own, so a category that passes here passes in any registry; the schema
// is the caller's (a tool's decoder checked it). This is the one place a
// category's paths are rewritten.
func CheckCategory(at, slug string, c gen.Category) (errs, warnings strictjson.Errors) {
	errs, warnings = checkCategory(slug, c, nil, nil)
	base := "categories." + slug
	for _, list := range []strictjson.Errors{errs, warnings} {
		for _, e := range list {
			if rest, ok := strings.CutPrefix(e.Path, base); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
				e.Path = at + rest
			} else if e.Path == "categories" {
				e.Path = at
			}
		}
	}
	return errs, warnings
}
