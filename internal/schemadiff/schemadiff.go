// Package schemadiff compares two schema directories the way a client of
// 3gs experiences the difference: each change is breaking (a client that
// worked before may fail now) or compatible (it keeps working).
//
// Direction decides most classes. For what clients send (tool arguments)
// and for files 3gs reads (the registry), narrowing what is accepted breaks
// clients that sent what is now refused, and widening is safe. For what 3gs
// sends (tool results, /health) it is the other way round: a client that
// handled every old value may not handle a new one, while fewer values
// harm nobody. Removing something a client uses, or requiring something it
// does not send, breaks it either way. A oneOf of required sets is judged
// by what it lets through given the rest of its object (see differ.oneOf).
package schemadiff

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/three-good-sources/3gs/internal/schema"
)

// Class says whether a change can break a client.
type Class int

const (
	Compatible Class = iota
	Breaking
)

func (c Class) String() string {
	if c == Breaking {
		return "breaking"
	}
	return "compatible"
}

// Change is one difference, at a JSON-pointer-like path into the surface:
// /tools/NAME/input/PARAM/..., /tools/NAME/output/FIELD/..., with /items for
// array items and /{key} for the values of a keyed object.
type Change struct {
	Class Class
	Path  string
	What  string
}

func (c Change) String() string { return fmt.Sprintf("%-10s %s: %s", c.Class, c.Path, c.What) }

// AnyBreaking reports whether any change is breaking.
func AnyBreaking(changes []Change) bool {
	return slices.ContainsFunc(changes, func(c Change) bool { return c.Class == Breaking })
}

// direction is whose values a schema describes.
type direction int

const (
	accepted direction = iota // values clients send, or files 3gs reads
	produced                  // values 3gs sends
)

// outputDocuments are the document schemas 3gs produces rather than reads.
var outputDocuments = map[string]bool{"health": true}

// Compare lists the changes from old to new, sorted by path.
func Compare(old, new *schema.Surface) []Change {
	d := &differ{}
	oldTools, newTools := toolsByName(old), toolsByName(new)
	for _, name := range unionKeys(oldTools, newTools) {
		a, b := oldTools[name], newTools[name]
		path := "/tools/" + name
		switch {
		case b == nil:
			d.add(Breaking, path, "tool removed (or renamed): clients calling it get -32601")
		case a == nil:
			d.add(Compatible, path, "new tool ("+b.Tier+")")
		default:
			d.tool(path, a, b)
		}
	}
	for _, name := range unionKeys(docsByName(old), docsByName(new)) {
		a, b := old.Document(name), new.Document(name)
		path := "/documents/" + name
		dir := accepted
		if outputDocuments[name] {
			dir = produced
		}
		switch {
		case b == nil:
			d.add(Breaking, path, "document schema removed")
		case a == nil:
			d.add(Compatible, path, "new document schema")
		default:
			d.node(path, a, b, dir)
		}
	}
	slices.SortStableFunc(d.changes, func(x, y Change) int { return strings.Compare(x.Path, y.Path) })
	return d.changes
}

type differ struct{ changes []Change }

func (d *differ) add(c Class, path, what string) {
	d.changes = append(d.changes, Change{c, path, what})
}

// narrowed records a change that accepts fewer values than before:
// breaking for accepted values, compatible for produced ones; widened is
// the opposite.
func (d *differ) narrowed(dir direction, path, what string) {
	if dir == accepted {
		d.add(Breaking, path, what+" (narrowed)")
	} else {
		d.add(Compatible, path, what+" (narrowed)")
	}
}

func (d *differ) widened(dir direction, path, what string) {
	if dir == produced {
		d.add(Breaking, path, what+" (widened: clients may get values they never saw)")
	} else {
		d.add(Compatible, path, what+" (widened)")
	}
}

func (d *differ) tool(path string, a, b *schema.Tool) {
	if ta, tb := schema.TierRank(a.Tier), schema.TierRank(b.Tier); tb > ta {
		d.add(Breaking, path+"/tier", a.Tier+" → "+b.Tier+": callers below "+b.Tier+" lose it")
	} else if tb < ta {
		d.add(Compatible, path+"/tier", a.Tier+" → "+b.Tier)
	}
	if a.Discoverable != b.Discoverable {
		d.add(Compatible, path+"/discoverable", strconv.FormatBool(a.Discoverable)+" → "+strconv.FormatBool(b.Discoverable)+": changes what a caller below its tier is told, not who may call it")
	}
	if a.ListedWhen != b.ListedWhen {
		d.add(Compatible, path+"/listedWhen", strconv.Quote(a.ListedWhen)+" → "+strconv.Quote(b.ListedWhen)+": changes when it is listed, not who may call it")
	}
	if a.Title != b.Title {
		d.add(Compatible, path+"/title", "title changed")
	}
	if a.Description != b.Description {
		d.add(Compatible, path+"/description", "description changed")
	}
	for _, k := range unionKeys(a.Annotations, b.Annotations) {
		if a.Annotations[k] != b.Annotations[k] {
			d.add(Compatible, path+"/annotations/"+k, strconv.FormatBool(a.Annotations[k])+" → "+strconv.FormatBool(b.Annotations[k]))
		}
	}
	d.node(path+"/input", a.Input, b.Input, accepted)
	d.node(path+"/output", a.Output, b.Output, produced)
}

// node compares two schemas of the same place.
func (d *differ) node(path string, a, b *schema.Node, dir direction) {
	if a.Describe() != b.Describe() {
		d.add(Compatible, path+"/description", "description changed")
	}
	a, b = a.Resolved(), b.Resolved()
	if a.Type != b.Type || a.IsMap() != b.IsMap() {
		d.add(Breaking, path+"/type", a.TypeText()+" → "+b.TypeText())
		return
	}
	if a.Title != b.Title {
		d.add(Compatible, path+"/title", "title changed")
	}
	d.bound(path+"/minLength", a.MinLength, b.MinLength, true, dir)
	d.bound(path+"/maxLength", a.MaxLength, b.MaxLength, false, dir)
	d.bound(path+"/minItems", a.MinItems, b.MinItems, true, dir)
	d.bound(path+"/maxItems", a.MaxItems, b.MaxItems, false, dir)
	d.bound(path+"/minProperties", a.MinProperties, b.MinProperties, true, dir)
	d.limit(path+"/minimum", a.Minimum, b.Minimum, true, dir)
	d.limit(path+"/maximum", a.Maximum, b.Maximum, false, dir)
	d.textRule(path+"/pattern", a.Pattern, b.Pattern, dir)
	d.textRule(path+"/format", a.Format, b.Format, dir)
	d.enum(path+"/enum", a.Enum, b.Enum, dir)
	if a.Items != nil && b.Items != nil {
		d.node(path+"/items", a.Items, b.Items, dir)
	}
	if a.PropertyNames != nil || b.PropertyNames != nil {
		d.node(path+"/propertyNames", orEmpty(a.PropertyNames, "string"), orEmpty(b.PropertyNames, "string"), dir)
	}
	if a.IsMap() {
		d.node(path+"/{key}", a.AdditionalSchema, b.AdditionalSchema, dir)
		return
	}
	if a.Type == "object" {
		d.object(path, a, b, dir)
	}
}

func (d *differ) object(path string, a, b *schema.Node, dir direction) {
	if a.AdditionalFalse != b.AdditionalFalse {
		if b.AdditionalFalse {
			d.add(Breaking, path+"/additionalProperties", "true → false: other fields are now refused")
		} else {
			d.add(Compatible, path+"/additionalProperties", "false → true")
		}
	}
	props := func(n *schema.Node) map[string]*schema.Node {
		m := map[string]*schema.Node{}
		for _, p := range n.Properties {
			m[p.Name] = p.Schema
		}
		return m
	}
	pa, pb := props(a), props(b)
	// Tool arguments are parameters; the rest (results, documents) fields.
	noun := "field"
	if dir == accepted && strings.HasPrefix(path, "/tools/") {
		noun = "parameter"
	}
	for _, name := range unionKeys(pa, pb) {
		p := path + "/" + name
		ra, rb := a.IsRequired(name), b.IsRequired(name)
		switch {
		case pb[name] == nil && dir == accepted:
			d.add(Breaking, p, noun+" removed: clients sending it are refused")
		case pb[name] == nil:
			d.add(Breaking, p, "field removed")
		case pa[name] == nil && dir == accepted && rb:
			d.add(Breaking, p, "new required "+noun)
		case pa[name] == nil && dir == accepted:
			d.add(Compatible, p, "new optional "+noun)
		case pa[name] == nil:
			d.add(Compatible, p, "new field")
		default:
			switch {
			case !ra && rb && dir == accepted:
				d.add(Breaking, p+"/required", "optional → required")
			case ra && !rb && dir == produced:
				d.add(Breaking, p+"/required", "always present → optional: clients may not find it")
			case ra != rb:
				d.add(Compatible, p+"/required", strconv.FormatBool(ra)+" → "+strconv.FormatBool(rb))
			}
			d.node(p, pa[name], pb[name], dir)
		}
	}
	d.oneOf(path, a, b, dir)
}

// maxOneOfNames bounds the properties oneOf compares exhaustively (every
// way of giving or leaving out each); past it a changed rule is taken to
// narrow and widen at once.
const maxOneOfNames = 16

// oneOf compares two objects' oneOf rules by what they let through. The
// rules only care which properties an object gives, so oneOf tries every
// way of giving or leaving out the properties either side requires or
// names in a branch. The new rule narrows when it refuses an object the
// old schema accepted as a whole (declared properties, required ones,
// oneOf); it widens when the old rule refused an object the new schema
// accepts. Required properties and new or removed ones are reported by
// object apart; this is what the rule itself adds. So adding
// "oneOf": [{"required": ["a"]}, {"required": ["b"]}] narrows (an object
// with neither was accepted), while making a required parameter one
// choice of two, the other new, narrows nothing.
func (d *differ) oneOf(path string, a, b *schema.Node, dir direction) {
	if len(a.OneOf) == 0 && len(b.OneOf) == 0 {
		return
	}
	path += "/oneOf"
	show := func(n *schema.Node) string {
		if t := n.OneOfText(); t != "" {
			return t
		}
		return "none"
	}
	what := show(a) + " → " + show(b)
	var names []string
	for _, n := range []*schema.Node{a, b} {
		names = append(names, n.Required...)
		for _, r := range n.OneOf {
			names = append(names, r.Required...)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	narrowed, widened := false, false
	if len(names) > maxOneOfNames {
		narrowed, widened = show(a) != show(b), show(a) != show(b)
	} else {
		for given := uint64(0); given < 1<<len(names); given++ {
			has := func(name string) bool {
				i, _ := slices.BinarySearch(names, name)
				return given&(1<<i) != 0
			}
			if accepts(a, names, has) && !holdsOneOf(b, has) {
				narrowed = true
			}
			if accepts(b, names, has) && !holdsOneOf(a, has) {
				widened = true
			}
		}
	}
	switch {
	case narrowed && widened:
		d.add(Breaking, path, what+": objects valid before may not be now, and the other way round")
	case narrowed:
		d.narrowed(dir, path, what)
	case widened:
		d.widened(dir, path, what)
	case !sameBranches(a, b):
		d.add(Compatible, path, what+" (the rule itself refuses nothing the rest allows, and lets nothing more through)")
	case show(a) != show(b) || a.OneOfHelp() != b.OneOfHelp():
		d.add(Compatible, path, "branches reordered or described anew")
	}
}

// sameBranches reports whether a's and b's oneOf have the same branches,
// in any order.
func sameBranches(a, b *schema.Node) bool {
	key := func(n *schema.Node) []string {
		var k []string
		for _, r := range n.OneOf {
			names := slices.Clone(r.Required)
			slices.Sort(names)
			k = append(k, strings.Join(names, "\x00"))
		}
		slices.Sort(k)
		return k
	}
	return slices.Equal(key(a), key(b))
}

// accepts reports whether object schema n accepts an object that gives
// the properties among names for which has is true, as far as declared
// properties, required ones and oneOf say.
func accepts(n *schema.Node, names []string, has func(string) bool) bool {
	for _, name := range names {
		declared := slices.ContainsFunc(n.Properties, func(p *schema.Property) bool { return p.Name == name })
		if has(name) && !declared && n.AdditionalFalse {
			return false
		}
	}
	for _, name := range n.Required {
		if !has(name) {
			return false
		}
	}
	return holdsOneOf(n, has)
}

// holdsOneOf reports whether exactly one branch of n's oneOf is complete;
// true when n has none.
func holdsOneOf(n *schema.Node, has func(string) bool) bool {
	if len(n.OneOf) == 0 {
		return true
	}
	held := 0
	for _, r := range n.OneOf {
		if !slices.ContainsFunc(r.Required, func(name string) bool { return !has(name) }) {
			held++
		}
	}
	return held == 1
}

// bound compares a count limit (length, items, properties); lower says
// whether it is a lower bound.
func (d *differ) bound(path string, a, b *int, lower bool, dir direction) {
	var fa, fb *float64
	if a != nil {
		v := float64(*a)
		fa = &v
	}
	if b != nil {
		v := float64(*b)
		fb = &v
	}
	d.limit(path, fa, fb, lower, dir)
}

func (d *differ) limit(path string, a, b *float64, lower bool, dir direction) {
	show := func(v *float64) string {
		if v == nil {
			return "none"
		}
		return strconv.FormatFloat(*v, 'f', -1, 64)
	}
	if a == nil && b == nil || a != nil && b != nil && *a == *b {
		return
	}
	what := show(a) + " → " + show(b)
	var tighter bool
	switch {
	case a == nil:
		tighter = true
	case b == nil:
		tighter = false
	case lower:
		tighter = *b > *a
	default:
		tighter = *b < *a
	}
	if tighter {
		d.narrowed(dir, path, what)
	} else {
		d.widened(dir, path, what)
	}
}

// textRule compares a pattern or a format: adding one narrows, removing
// one widens, and replacing one may do both.
func (d *differ) textRule(path, a, b string, dir direction) {
	switch {
	case a == b:
	case a == "":
		d.narrowed(dir, path, "none → "+strconv.Quote(b))
	case b == "":
		d.widened(dir, path, strconv.Quote(a)+" → none")
	default:
		d.add(Breaking, path, strconv.Quote(a)+" → "+strconv.Quote(b)+": values valid before may not be now, and the other way round")
	}
}

func (d *differ) enum(path string, a, b []string, dir direction) {
	switch {
	case slices.Equal(a, b):
		return
	case len(a) == 0:
		d.narrowed(dir, path, "now limited to "+strings.Join(b, ", "))
		return
	case len(b) == 0:
		d.widened(dir, path, "no longer limited to "+strings.Join(a, ", "))
		return
	}
	var gone, added []string
	for _, v := range a {
		if !slices.Contains(b, v) {
			gone = append(gone, v)
		}
	}
	for _, v := range b {
		if !slices.Contains(a, v) {
			added = append(added, v)
		}
	}
	if len(gone) > 0 {
		d.narrowed(dir, path, "values removed: "+strings.Join(gone, ", "))
	}
	if len(added) > 0 {
		d.widened(dir, path, "values added: "+strings.Join(added, ", "))
	}
}

func orEmpty(n *schema.Node, typ string) *schema.Node {
	if n == nil {
		return &schema.Node{Type: typ}
	}
	return n
}

func toolsByName(s *schema.Surface) map[string]*schema.Tool {
	m := map[string]*schema.Tool{}
	for _, t := range s.Tools {
		m[t.Name] = t
	}
	return m
}

func docsByName(s *schema.Surface) map[string]bool {
	m := map[string]bool{}
	for _, n := range s.DocumentNames() {
		m[n] = true
	}
	return m
}

// unionKeys lists the keys of both maps, sorted.
func unionKeys[V any](a, b map[string]V) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
