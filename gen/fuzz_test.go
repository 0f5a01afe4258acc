package gen_test

// The tests sit outside package gen, and see it through a dot import, so
// that they can use gen/gentest (the tools' result decoders), which
// imports gen.

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
	. "github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/gen/gentest"
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
	cases := []decoderCase{
		roundTrip("DecodeRegistry", DecodeRegistry, validRegistry, string(embedded)),
		roundTrip("DecodeSignature", DecodeSignature, `{"algorithm":"ed25519","pubkey":"gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o",`+
			`"signature":"Wjp2oGMxdyxb4pDqYQBpYtINCDaoTazWLVpy3TUgkel+9UC+fQRp8oJ8n9hBzsXa/x9EB0qj2DULJbLAEpaeAg==",`+
			`"signed_at":"2026-11-21T10:48:32Z","signed_sha256":"1b8fd0f017ecc65411b598c8f609f5cdb1ccb436665cd32c3e211733318fe60b"}`,
			`{"algorithm":"ed25519","pubkey":"gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o",`+
				`"signature":"Wjp2oGMxdyxb4pDqYQBpYtINCDaoTazWLVpy3TUgkel+9UC+fQRp8oJ8n9hBzsXa/x9EB0qj2DULJbLAEpaeAg==",`+
				`"signed_at":"2026-11-21T10:48:32Z","expires":"2026-12-21T10:48:32Z","log_seq":4,"log_head":"`+strings.Repeat("ab", 32)+`",`+
				`"signed_sha256":"1b8fd0f017ecc65411b598c8f609f5cdb1ccb436665cd32c3e211733318fe60b"}`),
		roundTrip("DecodeAuditEntry", DecodeAuditEntry, `{"seq":1,"time":"2026-11-25T10:00:00Z","action":"start","actor":"cli","version":"1.0.0","after":"`+strings.Repeat("cd", 32)+`"}`,
			`{"seq":2,"time":"2026-11-25T10:00:00.5Z","action":"upsert","slug":"go","actor":"ada","version":"1.0.1","before":"`+strings.Repeat("cd", 32)+`","after":"`+strings.Repeat("ef", 32)+`",`+
				`"prev":"`+strings.Repeat("01", 32)+`","signature":"Wjp2oGMxdyxb4pDqYQBpYtINCDaoTazWLVpy3TUgkel+9UC+fQRp8oJ8n9hBzsXa/x9EB0qj2DULJbLAEpaeAg=="}`),
		roundTrip("DecodeAuditHead", DecodeAuditHead, `{"seq":3,"hash":"`+strings.Repeat("ab", 32)+`","registry_sha256":"`+strings.Repeat("cd", 32)+`","registry_version":"1.0.3"}`,
			`{"seq":0,"registry_sha256":"`+strings.Repeat("cd", 32)+`","registry_version":"1.0.0"}`),
		roundTrip("DecodeQueryLog", DecodeQueryLog, `{"time":"2026-11-24T11:30:00.25+01:30","outcome":"slug","registry_version":"1"}`, `{"time":"2026-11-24T10:00:00Z","query":"crema","outcome":"candidates","score":0.2,"threshold":0.4,`+
			`"candidates":[{"slug":"espresso","score":0.2}],"registry_version":"1.0.0"}`,
			`{"time":"2026-11-24T10:00:00Z","slug":"espresso","outcome":"slug","registry_version":"1.0.0"}`),
		roundTrip("DecodeSourcehealth", DecodeSourcehealth, `{"checked_at":"2026-11-26T01:00:00Z","registry_version":"1.0.0","summary":{"ok":1,"redirected":1,"gone":0,"error":0,"changed":0},"sources":[]}`,
			`{"checked_at":"2026-11-26T01:00:00Z","registry_version":"1.0.0","curator":"Ada","summary":{"ok":1,"redirected":1,"gone":0,"error":0,"changed":0},"sources":[`+
				`{"category":"go","rank":1,"url":"https://a.example/","status":"ok","http_status":200,"title":"A","size":12,"checked_at":"2026-11-26T01:00:00Z"},`+
				`{"category":"go","rank":2,"url":"https://b.example/old","status":"redirected","reason":"http 301","http_status":301,"location":"https://b.example/new","checked_at":"2026-11-26T01:00:00Z"}]}`),
		roundTrip("DecodeTokens", DecodeTokens, `{"tokens":[{"name":"alice","tier":"user","sha256":"`+strings.Repeat("ab", 32)+`","created":"2026-11-21T10:00:00Z"}]}`),
		roundTrip("DecodeIdentityCache", DecodeIdentityCache, `{"checks":[]}`,
			`{"checks":[{"pubkey":"pk:gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o","url":"https://example.org","status":"verified","checked_at":"2026-11-26T01:00:00Z","verified_at":"2026-11-26T01:00:00Z","failures":0},`+
				`{"pubkey":"pk:gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o","url":"https://example.org/me","status":"failed","reason":"key not found","checked_at":"2026-11-26T01:00:00Z","failures":3}]}`),
		roundTrip("DecodeIdentityProof", DecodeIdentityProof, `{"pubkey":"pk:gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o"}`),
		roundTrip("DecodeProposalRecord", DecodeProposalRecord, `{"id":"p0123456789abcdef","created":"2026-11-26T01:00:00Z","action":"remove_category","slug":"go-learning","reason":"Gone.","status":"pending"}`,
			`{"id":"p0123456789abcdef","created":"2026-11-26T01:00:00Z","action":"replace_source","slug":"go-learning","rank":2,"source":{"rank":2,"name":"N","url":"https://n.example/","type":"book","why":"W"},"reason":"R","contact":"c","status":"accepted","votes":[{"pubkey":"pk:gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o","vote":"support","time":"2026-11-26T01:00:00Z","signature":"AA=="}],"decision":{"time":"2026-11-26T02:00:00Z","reason":"ok","actor":"cli","version":"1.0.1"}}`),
		roundTrip("DecodePeerCache", DecodePeerCache, `{"pubkey":"pk:gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o","url":"https://peer.example/",`+
			`"fetched_at":"2026-11-25T10:00:00Z","etag":"\"abc\"","registry":"{\"version\":\"1.0.0\"}","signature":"{}"}`),
		roundTrip("DecodeHealth", DecodeHealth, `{"status":"loading","version":"v","contract_version":"1.0.0","protocol_versions":["2026-07-28"]}`,
			`{"status":"ok","version":"v","contract_version":"1.0.0","protocol_versions":["2026-07-28","2025-11-25"],"registry":{"version":"1.0.0","updated":"2026-11-21","categories":3,`+
				`"sha256":"0000000000000000000000000000000000000000000000000000000000000000","signed":true,"verified":true},"pubkey":"pk:placeholder","sessions":0}`),
	}
	// Every tool's decoders, seeded with the examples its schema carries,
	// so a new tool is fuzzed without a line here.
	for i := range Tools {
		t := &Tools[i]
		in := append(slices.Clone(t.Examples.Arguments), `{"x":1}`)
		if t.Examples.Invalid != "" {
			in = append(in, t.Examples.Invalid)
		}
		cases = append(cases,
			untypedRoundTrip("Decode"+goName(t.Name)+"Input", t.DecodeInput, in...),
			untypedRoundTrip("Decode"+goName(t.Name)+"Output", func(data []byte) (any, error) { return gentest.DecodeOutput(t.Name, data) }, t.Examples.Result))
	}
	return cases
}

// untypedRoundTrip is roundTrip for the decoders the tool table holds,
// which return their value as any.
func untypedRoundTrip(name string, decode func([]byte) (any, error), seeds ...string) decoderCase {
	return roundTrip(name, func(data []byte) (*any, error) {
		v, err := decode(data)
		if err != nil {
			return nil, err
		}
		return &v, nil
	}, seeds...)
}

// goName is the Go name the generator gives a tool: get_sources →
// GetSources.
func goName(tool string) string {
	var b strings.Builder
	for _, part := range strings.Split(tool, "_") {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// TestEveryDecoderIsFuzzed: a schema that gains a decoder must also gain
// a fuzzing case, and the first seed of each case is a valid document, so
// fuzzing starts from inside the schema as well as outside it.
func TestEveryDecoderIsFuzzed(t *testing.T) {
	fset := token.NewFileSet()
	names, _ := filepath.Glob("*_gen.go")
	outputs, _ := filepath.Glob(filepath.Join("gentest", "*_gen.go"))
	names = append(names, outputs...)
	var generated []string
	for _, name := range names {
		file, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			// DecodeTInPlace runs DecodeT's code on a buffer it keeps, and
			// gentest.DecodeOutput picks a DecodeTOutput by name: fuzzing
			// those covers them.
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Decode") && !strings.HasSuffix(fn.Name.Name, "InPlace") && fn.Name.Name != "DecodeOutput" {
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
