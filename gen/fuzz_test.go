package gen

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/bytedance/sonic"
)

// fuzzDecoder checks a generated decoder on arbitrary bytes: it must never
// panic, must fail with paths rather than half-answers, and whatever it
// accepts must survive encode → decode unchanged.
func fuzzDecoder[T any](f *testing.F, decode func([]byte) (*T, error), seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"a":1,"A":[{"b":null}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := decode(data)
		if err != nil {
			messages(t, err) // asserts the error is strictjson.Errors
			return
		}
		enc, err := sonic.Marshal(v)
		if err != nil {
			t.Fatalf("accepted value does not encode: %v", err)
		}
		again, err := decode(enc)
		if err != nil {
			t.Fatalf("re-encoded value %s is rejected: %v", enc, err)
		}
		if !reflect.DeepEqual(v, again) {
			t.Fatalf("round trip changed the value:\n%+v\n%+v", v, again)
		}
	})
}

func FuzzDecodeRegistry(f *testing.F) {
	embedded, err := os.ReadFile("../registry.json")
	if err != nil {
		f.Fatal(err)
	}
	fuzzDecoder(f, DecodeRegistry, validRegistry, string(embedded))
}

func FuzzDecodeGetSourcesInput(f *testing.F) {
	fuzzDecoder(f, DecodeGetSourcesInput, `{"query":"learn go"}`, `{"query":"x","threshold":0.5}`, `{"query":"x","Query":"y","query":"z"}`)
}

func FuzzDecodeListCategoriesInput(f *testing.F) {
	fuzzDecoder(f, DecodeListCategoriesInput, `{"x":1}`)
}

func FuzzDecodeGetProvenanceInput(f *testing.F) {
	fuzzDecoder(f, DecodeGetProvenanceInput)
}

func FuzzDecodeGetEndorsementsInput(f *testing.F) {
	fuzzDecoder(f, DecodeGetEndorsementsInput)
}

func FuzzDecodeGetSourcesOutput(f *testing.F) {
	fuzzDecoder(f, DecodeGetSourcesOutput, `{"query":"q","slug":"s","name":"n","description":"d","score":0.5,"registry_version":"1.0.0","curator":{"name":"c","pubkey":"pk:gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o"},"sources":[`+
		`{"rank":1,"name":"a","url":"u","type":"tool","why":"w"},{"rank":2,"name":"b","url":"u","type":"tool","why":"w"},{"rank":3,"name":"c","url":"u","type":"tool","why":"w"}]}`,
		`{"query":"q","sources":[],"closest":{"slug":"s","score":0.2},"available_categories":["a","b"]}`)
}

func FuzzDecodeListCategoriesOutput(f *testing.F) {
	fuzzDecoder(f, DecodeListCategoriesOutput, `{"categories":[{"slug":"s","name":"n","description":"d","tags":["s"]}]}`)
}

func FuzzDecodeGetProvenanceOutput(f *testing.F) {
	fuzzDecoder(f, DecodeGetProvenanceOutput, `{"curator":{"name":"n","pubkey":"pk:gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o"},"pubkey_configured":false,"version":"1.0.0","updated":"2026-11-21","category_count":3,`+
		`"endorsement_count":0,"registry_sha256":"0000000000000000000000000000000000000000000000000000000000000000","signed":true,"verified":false,"signature_detail":"d",`+
		`"signed_by":"pk:gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o","signed_at":"2026-11-21T10:48:32Z",`+
		`"verification":{"command":"3gs verify","where":"w","steps":[{"what":"w","run":"r","expect":"e"}]}}`)
}

func FuzzDecodeGetEndorsementsOutput(f *testing.F) {
	fuzzDecoder(f, DecodeGetEndorsementsOutput, `{"endorsements":[{"pubkey":"pk:gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o","url":"u","since":"d","name":"n"}]}`)
}

func FuzzDecodeSignature(f *testing.F) {
	fuzzDecoder(f, DecodeSignature, `{"algorithm":"ed25519","pubkey":"gcumbhd7sqit6nn457jxmrwqx9pyymqwamnarekgo3xppqo6a19o",`+
		`"signature":"Wjp2oGMxdyxb4pDqYQBpYtINCDaoTazWLVpy3TUgkel+9UC+fQRp8oJ8n9hBzsXa/x9EB0qj2DULJbLAEpaeAg==",`+
		`"signed_at":"2026-11-21T10:48:32Z","signed_sha256":"1b8fd0f017ecc65411b598c8f609f5cdb1ccb436665cd32c3e211733318fe60b"}`)
}

func FuzzDecodeTokens(f *testing.F) {
	fuzzDecoder(f, DecodeTokens, `{"tokens":[{"name":"alice","tier":"user","sha256":"`+strings.Repeat("ab", 32)+`","created":"2026-11-21T10:00:00Z"}]}`)
}

func FuzzDecodeUpsertCategoryInput(f *testing.F) {
	fuzzDecoder(f, DecodeUpsertCategoryInput, `{"slug":"a-b","category":{"name":"N","description":"D","query_patterns":["x y","y z","z w"],"sources":[`+
		`{"rank":1,"name":"A","url":"https://a.example/","type":"tool","why":"W"},{"rank":2,"name":"B","url":"https://b.example/","type":"book","why":"W"},`+
		`{"rank":3,"name":"C","url":"https://c.example/","type":"repo","why":"W"}]}}`)
}

func FuzzDecodeHealth(f *testing.F) {
	fuzzDecoder(f, DecodeHealth, `{"status":"loading","version":"v","protocol_versions":["2026-07-28"]}`,
		`{"status":"ok","version":"v","protocol_versions":["2026-07-28","2025-11-25"],"registry":{"version":"1.0.0","updated":"2026-11-21","categories":3,`+
			`"sha256":"0000000000000000000000000000000000000000000000000000000000000000","signed":true,"verified":true},"pubkey":"pk:placeholder","sessions":0}`)
}
