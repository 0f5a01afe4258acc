package registry

import (
	"bytes"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/three-good-sources/3gs/gen"
)

// CompareVersions orders two registry versions (MAJOR.MINOR.PATCH with an
// optional -pre-release and +build, as the schema allows) by semantic
// versioning's rules: numbers numerically, a pre-release before its
// release, build metadata ignored. It returns -1, 0 or 1.
//
// It is how a rolled-back copy is recognised: a registry whose version is
// lower than the one already served is an old copy, whoever signed it.
func CompareVersions(a, b string) int {
	coreA, preA := splitVersion(a)
	coreB, preB := splitVersion(b)
	for i := range 3 {
		if c := compareNumeric(part(coreA, i), part(coreB, i)); c != 0 {
			return c
		}
	}
	switch {
	case preA == preB:
		return 0
	case preA == "":
		return 1
	case preB == "":
		return -1
	}
	fa, fb := strings.Split(preA, "."), strings.Split(preB, ".")
	for i := 0; i < len(fa) && i < len(fb); i++ {
		na, errA := strconv.ParseUint(fa[i], 10, 64)
		nb, errB := strconv.ParseUint(fb[i], 10, 64)
		var c int
		switch {
		case errA == nil && errB == nil:
			c = cmpUint(na, nb)
		case errA == nil: // numeric identifiers come first
			c = -1
		case errB == nil:
			c = 1
		default:
			c = strings.Compare(fa[i], fb[i])
		}
		if c != 0 {
			return c
		}
	}
	return cmpUint(uint64(len(fa)), uint64(len(fb)))
}

func splitVersion(v string) (core []string, pre string) {
	v, _, _ = strings.Cut(v, "+")
	v, pre, _ = strings.Cut(v, "-")
	return strings.Split(v, "."), pre
}

func part(core []string, i int) string {
	if i < len(core) {
		return core[i]
	}
	return "0"
}

// compareNumeric compares decimal strings of any length.
func compareNumeric(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return cmpUint(uint64(len(a)), uint64(len(b)))
	}
	return strings.Compare(a, b)
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// BumpPatch raises the patch number of a semantic version and drops any
// pre-release or build suffix (1.4.2 → 1.4.3, 2.0.0-rc.1 → 2.0.1): how
// every change made by 3gs versions a registry, whether a curator tool or
// a command made it, so peers and followers see a newer version. A version
// that is not MAJOR.MINOR.PATCH is returned unchanged.
func BumpPatch(v string) string {
	core, _, _ := strings.Cut(v, "-")
	core, _, _ = strings.Cut(core, "+")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return v
	}
	p := parts[2]
	if p == "" || strings.Trim(p, "0123456789") != "" {
		return v
	}
	// Decimal addition on the digits, so a patch number of any length
	// (the schema bounds none) is raised, never left as it was or wrapped.
	digits := []byte(p)
	i := len(digits) - 1
	for ; i >= 0 && digits[i] == '9'; i-- {
		digits[i] = '0'
	}
	if i < 0 {
		digits = append([]byte{'1'}, digits...)
	} else {
		digits[i]++
	}
	return parts[0] + "." + parts[1] + "." + string(digits)
}

// WithVersion is r with its version set to v and the rest of the file as
// its curator wrote it: the top-level "version" member's value is replaced
// in place when that changes nothing else (checked by decoding both), and
// the registry is written out anew otherwise. The result is loaded with
// the size limit max.
func (r *Registry) WithVersion(v string, max int64) (*Registry, error) {
	doc, err := gen.DecodeRegistry(r.Bytes())
	if err != nil {
		return nil, err
	}
	doc.Version = v
	want := gen.EncodeRegistry(doc)
	member := regexp.MustCompile(`"version"\s*:\s*"` + regexp.QuoteMeta(r.Version()) + `"`)
	data := r.Bytes()
	for _, at := range member.FindAllIndex(data, -1) {
		edited := slices.Concat(data[:at[0]], []byte(`"version": "`+v+`"`), data[at[1]:])
		if got, err := gen.DecodeRegistry(edited); err == nil && bytes.Equal(gen.EncodeRegistry(got), want) {
			return LoadLimit(edited, max)
		}
	}
	return LoadLimit(want, max)
}
