package strictjson

import (
	"slices"
	"testing"

	"github.com/bytedance/sonic/ast"
)

// traversed tokenizes src the general way: sonic's traversal, then its
// validator; ok is false when either refuses it.
func traversed(src string) (toks []token, ok bool) {
	t := &tokenizer{src: src, maxDepth: MaxDepth}
	if ast.Preorder(src, t, nil) != nil || validate([]byte(src)) != nil {
		return nil, false
	}
	return t.toks, true
}

// checkFlat holds flat to the general way for src: when it takes a
// document it yields the same tokens, and it takes nothing the general
// way refuses.
func checkFlat(t *testing.T, src string) bool {
	t.Helper()
	f := &tokenizer{src: src, maxDepth: MaxDepth}
	took := f.flat()
	if !took {
		if len(f.toks) != 0 {
			t.Fatalf("%q: flat left %d tokens behind", src, len(f.toks))
		}
		return false
	}
	want, ok := traversed(src)
	if !ok {
		t.Fatalf("%q: flat took a document the traversal refuses", src)
	}
	if !slices.Equal(f.toks, want) {
		t.Fatalf("%q: flat tokens\n%+v\ntraversal tokens\n%+v", src, f.toks, want)
	}
	return true
}

func TestFlatMatchesTraversal(t *testing.T) {
	takes := []string{
		`{}`, ` { } `, `{"query":"how do I run a bitcoin full node"}`, `{"slug":"rust-learning"}`,
		`{"query":""}`, `{"":"x"}`, "\t{\n\"a\" : \"b\" ,\r\"c\":true,\"d\":false,\"e\":null}\n",
		`{"query":"café ☕ 𝄞"}`, `{"a":"b","a":"c"}`,
	}
	for _, src := range takes {
		if !checkFlat(t, src) {
			t.Errorf("%q: flat did not take it", src)
		}
	}
	leaves := []string{
		``, ` `, `[]`, `"x"`, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":"b",}`, `{"a":"b"}x`, `{"a":"b"} {}`,
		`{"a":"b\n"}`, `{"a\"":"b"}`, `{"a":"\u00e9"}`, `{"a":1}`, `{"a":-1.5e3}`, `{"a":{}}`, `{"a":[]}`,
		`{"a":tru}`, `{"a":truex}`, `{"a":nul}`, `{"a":"b" "c":"d"}`, `{"a":"b",,"c":"d"}`, "{\"a\":\"\x01\"}",
		`{a:"b"}`, "\f{}", `{"a":"b"`, `{"a":"b`,
	}
	for _, src := range leaves {
		if checkFlat(t, src) {
			t.Errorf("%q: flat took it", src)
		}
	}
}

func FuzzFlat(f *testing.F) {
	for _, s := range []string{`{}`, `{"query":"learn rust"}`, `{"slug":"x","query":null}`, `{"a":true,"b":false}`, `{"a":"\\"}`, `{"a":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkFlat(t, src)
	})
}
