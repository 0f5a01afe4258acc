package gen_test

import (
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	. "github.com/three-good-sources/3gs/gen"
)

// manyCategories is a registry of n categories, each made from the base
// document's, where bad(i) may replace the text of member i ("key":value)
// to break it.
func manyCategories(n int, bad func(i int) string) []byte {
	var b strings.Builder
	b.WriteString(validRegistry[:strings.Index(validRegistry, `"categories":{`)+len(`"categories":{`)])
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		if s := bad(i); s != "" {
			b.WriteString(s)
			continue
		}
		b.WriteString(`"c` + strconv.Itoa(i) + `":` + goCategory)
	}
	b.WriteString("}}")
	return []byte(b.String())
}

// TestParallelCategories: a registry with enough categories to be read on
// several cores decodes to the same document, with the same problems in
// the same order, as when it is read on one.
func TestParallelCategories(t *testing.T) {
	few := func(i int) string {
		switch i {
		case 5, 2999:
			return `"c4":` + goCategory // a duplicate of c4
		case 3000:
			return `"c4":{"name":1}` // another, not decoded
		case 17:
			return `"Bad_Key":` + goCategory
		case 1500:
			return `"` + strings.Repeat("k", 70) + `":` + goCategory
		case 1501:
			return `"c1501":"not an object"`
		case 2100:
			return `"c2100":` + strings.Replace(goCategory, `"rank":2`, `"rank":1e999`, 1)
		case 2101:
			return `"c2101":` + strings.Replace(goCategory, `"name":"Go"`, `"name":"G\u006f","extra":true`, 1)
		case 3999:
			return `"c3999":` + strings.Replace(goCategory, `"https://b.example/"`, `"b.example"`, 1)
		}
		return ""
	}
	many := func(i int) string { // far more than MaxErrors problems, across every run
		if i%7 == 3 {
			return `"c` + strconv.Itoa(i) + `":{"name":"","description":"D"}`
		}
		return ""
	}
	small := func(i int) string { return `"c` + strconv.Itoa(i) + `":` + strconv.Itoa(i) } // below the split size: not lazy
	for name, data := range map[string][]byte{
		"few problems":  manyCategories(4000, few),
		"many problems": manyCategories(4000, many),
		"valid":         manyCategories(3000, func(int) string { return "" }),
		"scalars":       manyCategories(3000, small),
	} {
		t.Run(name, func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
			type result struct {
				doc  *Registry
				errs []string
			}
			read := func(procs int, inPlace bool) result {
				runtime.GOMAXPROCS(procs)
				decode := DecodeRegistry
				if inPlace {
					decode = DecodeRegistryInPlace
				}
				doc, err := decode(slices.Clone(data))
				return result{doc, messages(t, err)}
			}
			for _, inPlace := range []bool{false, true} {
				one := read(1, inPlace)
				if len(one.errs) == 0 && name != "valid" {
					t.Fatalf("no problems found; the case tests nothing")
				}
				for _, procs := range []int{2, 3, 8} {
					got := read(procs, inPlace)
					if !slices.Equal(got.errs, one.errs) {
						t.Errorf("in place %v, %d cores: problems differ from one core's\ngot  %q\nwant %q", inPlace, procs, got.errs, one.errs)
					}
					if !reflect.DeepEqual(got.doc, one.doc) {
						t.Errorf("in place %v, %d cores: document differs from one core's", inPlace, procs)
					}
				}
			}
		})
	}
}
