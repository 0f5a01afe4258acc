package gen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bytedance/sonic"
)

// decoderCase is one generated decoder under fuzzing, with the inputs its
// fuzzing starts from.
type decoderCase struct {
	name       string
	check      func(t *testing.T, data []byte)
	decodeOnly func(string) error
	seeds      []string
}

// roundTrip checks a generated decoder on arbitrary bytes: it must never
// panic, must fail with paths rather than half-answers, and whatever it
// accepts must survive encode → decode unchanged.
func roundTrip[T any](name string, decode func([]byte) (*T, error), seeds ...string) decoderCase {
	decodeOnly := func(s string) error { _, err := decode([]byte(s)); return err }
	return decoderCase{name: name, seeds: seeds, decodeOnly: decodeOnly, check: func(t *testing.T, data []byte) {
		v, err := decode(data)
		if err != nil {
			messages(t, err) // asserts the error is strictjson.Errors
			return
		}
		enc, err := sonic.Marshal(v)
		if err != nil {
			t.Fatalf("%s: accepted value does not encode: %v", name, err)
		}
		again, err := decode(enc)
		if err != nil {
			t.Fatalf("%s: re-encoded value %s is rejected: %v", name, enc, err)
		}
		if !reflect.DeepEqual(v, again) {
			t.Fatalf("%s: round trip changed the value:\n%+v\n%+v", name, v, again)
		}
	}}
}

// FuzzGeneratedDecoders fuzzes every generated decoder in one target: the
// first byte of an input picks the decoder, the rest is its input. One
// target, rather than one per decoder, lets a long fuzzing run cover them
// all in the time one would get, and the decoders share most of their code
// (internal/strictjson), so what the fuzzer learns on one carries over.
// TestEveryDecoderIsFuzzed keeps the list complete.
func FuzzGeneratedDecoders(f *testing.F) {
	cases := decoderCases(f)
	for i, c := range cases {
		for _, s := range append(c.seeds, `{}`, `null`, `{"a":1,"A":[{"b":null}]}`) {
			f.Add(append([]byte{byte(i)}, s...))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		cases[int(data[0])%len(cases)].check(t, data[1:])
	})
}

func decoderCases(f testing.TB) []decoderCase {
	embedded, err := os.ReadFile("../registry.json")
	if err != nil {
		f.Fatal(err)
	}
	return []decoderCase{
		roundTrip("DecodeRegistry", DecodeRegistry, validRegistry, string(embedded)),
		roundTrip("DecodeGetSourcesInput", DecodeGetSourcesInput, `{"query":"learn go"}`, `{"query":"x","threshold":0.5}`, `{"query":"x","Query":"y","query":"z"}`),
		roundTrip("DecodeListCategoriesInput", DecodeListCategoriesInput, `{}`, `{"x":1}`),
		roundTrip("DecodeGetProvenanceInput", DecodeGetProvenanceInput),
		roundTrip("DecodeGetEndorsementsInput", DecodeGetEndorsementsInput),
		roundTrip("DecodeGetSourcesOutput", DecodeGetSourcesOutput, `{"query":"q","slug":"s","name":"n","description":"d","score":0.5,"registry_version":"1.0.0","curator":{"name":"c","pubkey":"pk:gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o"},"sources":[`+
			`{"rank":1,"name":"a","url":"u","type":"tool","why":"w"},{"rank":2,"name":"b","url":"u","type":"tool","why":"w"},{"rank":3,"name":"c","url":"u","type":"tool","why":"w"}]}`,
			`{"query":"q","sources":[],"closest":{"slug":"s","score":0.2},"available_categories":["a","b"]}`),
		roundTrip("DecodeListCategoriesOutput", DecodeListCategoriesOutput, `{"categories":[{"slug":"s","name":"n","description":"d","tags":["s"]}]}`),
		roundTrip("DecodeGetProvenanceOutput", DecodeGetProvenanceOutput, `{"curator":{"name":"n","pubkey":"pk:gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o"},"pubkey_configured":false,"version":"1.0.0","updated":"2026-11-21","category_count":3,`+
			`"endorsement_count":0,"registry_sha256":"0000000000000000000000000000000000000000000000000000000000000000","signed":true,"verified":false,"signature_detail":"d",`+
			`"signed_by":"pk:gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o","signed_at":"2026-11-21T10:48:32Z",`+
			`"verification":{"command":"3gs verify","where":"w","steps":[{"what":"w","run":"r","expect":"e"}]}}`),
		roundTrip("DecodeGetEndorsementsOutput", DecodeGetEndorsementsOutput, `{"endorsements":[{"pubkey":"pk:gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o","url":"u","since":"d","name":"n"}]}`),
		roundTrip("DecodeSignature", DecodeSignature, `{"algorithm":"ed25519","pubkey":"gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o",`+
			`"signature":"Wjp2oGMxdyxb4pDqYQBpYtINCDaoTazWLVpy3TUgkel+9UC+fQRp8oJ8n9hBzsXa/x9EB0qj2DULJbLAEpaeAg==",`+
			`"signed_at":"2026-11-21T10:48:32Z","signed_sha256":"1b8fd0f017ecc65411b598c8f609f5cdb1ccb436665cd32c3e211733318fe60b"}`),
		roundTrip("DecodeQuerylog", DecodeQuerylog, `{"time":"2026-11-24T10:00:00Z","query":"crema","outcome":"candidates","score":0.2,"threshold":0.4,`+
			`"candidates":[{"slug":"espresso","score":0.2}],"registry_version":"1.0.0"}`,
			`{"time":"2026-11-24T10:00:00Z","slug":"espresso","outcome":"slug","registry_version":"1.0.0"}`),
		roundTrip("DecodeTokens", DecodeTokens, `{"tokens":[{"name":"alice","tier":"user","sha256":"`+strings.Repeat("ab", 32)+`","created":"2026-11-21T10:00:00Z"}]}`),
		roundTrip("DecodeUpsertCategoryInput", DecodeUpsertCategoryInput, `{"slug":"a-b","category":{"name":"N","description":"D","query_patterns":["x y","y z","z w"],"sources":[`+
			`{"rank":1,"name":"A","url":"https://a.example/","type":"tool","why":"W"},{"rank":2,"name":"B","url":"https://b.example/","type":"book","why":"W"},`+
			`{"rank":3,"name":"C","url":"https://c.example/","type":"repo","why":"W"}]}}`),
		roundTrip("DecodeHealth", DecodeHealth, `{"status":"loading","version":"v","contract_version":"1.0.0","protocol_versions":["2026-07-28"]}`,
			`{"status":"ok","version":"v","contract_version":"1.0.0","protocol_versions":["2026-07-28","2025-11-25"],"registry":{"version":"1.0.0","updated":"2026-11-21","categories":3,`+
				`"sha256":"0000000000000000000000000000000000000000000000000000000000000000","signed":true,"verified":true},"pubkey":"pk:placeholder","sessions":0}`),
		roundTrip("DecodeExplainMatchInput", DecodeExplainMatchInput, `{"query":"learn go","limit":3,"threshold":0.2}`),
		roundTrip("DecodeExplainMatchOutput", DecodeExplainMatchOutput, `{"query":"q","threshold":0.4,"candidates":[]}`),
		roundTrip("DecodeUpsertCategoryOutput", DecodeUpsertCategoryOutput, `{"slug":"a","created":true,"registry_version":"1.0.1","updated":"2026-11-21","category_count":4,"registry_sha256":"`+strings.Repeat("0", 64)+`","signed":false}`),
		roundTrip("DecodeRemoveCategoryInput", DecodeRemoveCategoryInput, `{"slug":"a-b"}`, `{"slug":"A"}`),
		roundTrip("DecodeRemoveCategoryOutput", DecodeRemoveCategoryOutput, `{"slug":"a","registry_version":"1.0.1","updated":"2026-11-21","category_count":4,"registry_sha256":"`+strings.Repeat("0", 64)+`","signed":false}`),
		roundTrip("DecodeReloadRegistryInput", DecodeReloadRegistryInput),
		roundTrip("DecodeReloadRegistryOutput", DecodeReloadRegistryOutput, `{"reloaded":true,"registry_version":"1.0.1","registry_sha256":"`+strings.Repeat("0", 64)+`","category_count":4,"verified":false}`),
	}
}

// TestEveryDecoderIsFuzzed: a schema that gains a decoder must also gain
// a fuzzing case, and the first seed of each case is a valid document, so
// fuzzing starts from inside the schema as well as outside it.
func TestEveryDecoderIsFuzzed(t *testing.T) {
	fset := token.NewFileSet()
	names, _ := filepath.Glob("*_gen.go")
	var generated []string
	for _, name := range names {
		file, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Decode") {
				generated = append(generated, fn.Name.Name)
			}
		}
	}
	var fuzzed []string
	for _, c := range decoderCases(t) {
		fuzzed = append(fuzzed, c.name)
		if len(c.seeds) > 0 {
			if err := c.decodeOnly(c.seeds[0]); err != nil {
				t.Errorf("%s: the first seed is not valid: %v", c.name, err)
			}
		}
	}
	slices.Sort(generated)
	slices.Sort(fuzzed)
	if !slices.Equal(generated, fuzzed) {
		t.Errorf("generated decoders %v\nfuzzed decoders    %v", generated, fuzzed)
	}
}
