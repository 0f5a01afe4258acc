// Package registry loads registry.json into an immutable snapshot.
//
// Loading is the generated strict decoder (every schema rule, with paths)
// followed by the rules a JSON Schema cannot state: the three ranks are
// exactly 1, 2 and 3; no URL appears twice in a category; every query
// pattern keeps at least one searchable word after normalization; every
// public key is a real Ed25519 key in canonical z-base-32, and no endorser
// is listed twice. All
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
	"slices"
	"strconv"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/pkarr"
	"github.com/three-good-sources/3gs/internal/strictjson"
	"github.com/three-good-sources/3gs/internal/textnorm"
)

// Registry is a loaded, validated registry. It is never modified after Load
// returns, so any number of requests may read it at once; a registry change
// produces a new Registry.
type Registry struct {
	doc        gen.Registry
	categories []Category // sorted by slug
	bySlug     map[string]*Category
	data       []byte
	sha256     string
	warnings   strictjson.Errors // see Warnings
}

// Category is one topic with its slug. Callers must not modify it.
type Category struct {
	Slug string
	*gen.Category
}

// MaxSize bounds the registry file. Registries are hand-curated; a file this
// large is a mistake, and refusing it keeps load time and memory bounded.
const MaxSize = 8 << 20

// Load validates data and returns the snapshot, or a strictjson.Errors that
// lists every problem found.
func Load(data []byte) (*Registry, error) {
	if len(data) > MaxSize {
		return nil, strictjson.Errors{{Reason: fmt.Sprintf("registry is %d bytes, more than the %d-byte limit", len(data), MaxSize)}}
	}
	doc, err := gen.DecodeRegistry(data)
	var errs strictjson.Errors
	if err != nil && !errors.As(err, &errs) {
		return nil, err
	}
	if doc == nil { // not JSON at all: nothing further to check
		return nil, errs
	}
	rules, warnings := checkRules(doc)
	errs = append(errs, rules...)
	if len(errs) > 0 {
		return nil, errs
	}
	sum := sha256.Sum256(data)
	r := &Registry{doc: *doc, data: data, sha256: hex.EncodeToString(sum[:]), bySlug: map[string]*Category{}, warnings: warnings}
	for slug := range doc.Categories {
		c := doc.Categories[slug]
		slices.SortFunc(c.Sources, func(a, b gen.Source) int { return a.Rank - b.Rank })
		r.categories = append(r.categories, Category{Slug: slug, Category: &c})
	}
	slices.SortFunc(r.categories, func(a, b Category) int { return strings.Compare(a.Slug, b.Slug) })
	for i := range r.categories {
		r.bySlug[r.categories[i].Slug] = &r.categories[i]
	}
	return r, nil
}

// LoadFile reads and loads the registry at path.
func LoadFile(path string) (*Registry, error) {
	data, err := readLimited(path)
	if err != nil {
		return nil, err
	}
	return Load(data)
}

func readLimited(path string) ([]byte, error) {
	return safefile.Read(path, MaxSize, "registry")
}

// checkRules applies the rules beyond the schema. It runs on whatever the
// decoder managed to fill, so it only judges values the schema accepted
// (a rank outside 1..3 is already reported; here it is skipped). It also
// returns the warnings Warnings reports, found while each URL is parsed
// once.
func checkRules(doc *gen.Registry) (errs, warnings strictjson.Errors) {
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
	endorsedBy := map[string]int{}
	for i, e := range doc.Endorsements {
		p := "endorsements[" + strconv.Itoa(i) + "].pubkey"
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
	slugs := make([]string, 0, len(doc.Categories))
	for slug := range doc.Categories {
		slugs = append(slugs, slug)
	}
	slices.Sort(slugs)
	for _, slug := range slugs {
		c := doc.Categories[slug]
		base := "categories." + slug
		checkName(base+".name", c.Name, fail)
		rankAt := map[int]int{}
		urlAt := map[string]int{}
		for i, s := range c.Sources {
			sp := base + ".sources[" + strconv.Itoa(i) + "]"
			checkName(sp+".name", s.Name, fail)
			u := checkURL(sp+".url", s.URL, fail)
			warn(sp+".url", u)
			if s.Rank >= 1 && s.Rank <= 3 {
				if j, dup := rankAt[s.Rank]; dup {
					fail(sp+".rank", fmt.Sprintf("rank %d is already used by sources[%d]; the three sources must be ranked 1, 2 and 3", s.Rank, j))
				} else {
					rankAt[s.Rank] = i
				}
			}
			if u != nil {
				key := urlKey(u)
				if j, dup := urlAt[key]; dup {
					fail(sp+".url", fmt.Sprintf("same URL as sources[%d]; each source must point somewhere different", j))
				} else {
					urlAt[key] = i
				}
			}
		}
		for i, p := range c.QueryPatterns {
			if p != "" && len(textnorm.Tokens(p)) == 0 {
				fail(base+".query_patterns["+strconv.Itoa(i)+"]", "has no searchable words once stop words and punctuation are removed; write it the way a user would ask about this topic")
			}
		}
	}
	return errs, warnings
}

// checkKey reports a key that has the form the schema asks for (so the
// schema has not already reported it) but is still not an Ed25519 public
// key: a non-canonical last character, or bytes off the curve.
func checkKey(k, path string, fail func(path, reason string)) {
	if len(k) != len(pkarr.Prefix)+pkarr.EncodedLen || !strings.HasPrefix(k, pkarr.Prefix) {
		return
	}
	if _, err := pkarr.ParsePublicKey(k); err != nil {
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
	doc.Categories = make(map[string]gen.Category, len(r.doc.Categories))
	for slug, c := range r.doc.Categories {
		doc.Categories[slug] = c
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
	c, ok := r.bySlug[slug]
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
	k, err := pkarr.ParsePublicKey(r.doc.Curator.Pubkey)
	return k, err == nil
}
