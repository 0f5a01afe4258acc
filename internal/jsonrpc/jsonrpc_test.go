package jsonrpc

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bytedance/sonic"
	"github.com/bytedance/sonic/encoder"
)

// nested is a ping whose params hold arrays nested so that the whole
// message is depth levels deep.
func nested(depth int) string {
	n := depth - 2 // the envelope and params are two levels
	return `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}`
}

func TestParseRefusals(t *testing.T) {
	for _, c := range []struct {
		line   string
		code   int
		id     string
		reason string
	}{
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\x00ng\"}", CodeParseError, "null", "control character U+0000 in a string at byte 36"},
		{"{\"jsonrpc\":\"2.0\",\"id\":\"a\tb\",\"method\":\"ping\"}", CodeParseError, "null", "U+0009"},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\xffng\"}", CodeParseError, "null", "not valid UTF-8"},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xed\xa0\x80\"}", CodeParseError, "null", "not valid UTF-8"}, // an encoded surrogate
		{`{"jsonrpc":"2.0","id":"\0","method":"ping"}`, CodeParseError, "null", "invalid escape in a string at byte 23"},
		{`{"jsonrpc":"2.0","id":"\u12","method":"ping"}`, CodeParseError, "null", "invalid escape"},
		{`{"jsonrpc":"2.0","id":"\uZZZZ","method":"ping"}`, CodeParseError, "null", "invalid escape"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping\`, CodeParseError, "null", "invalid escape"},
		{"{\"jsonrpc\":\"2.0\",\"id\":\"\\\x01\",\"method\":\"ping\"}", CodeParseError, "null", "invalid escape"},
		{nested(MaxDepth + 1), CodeParseError, "null", "nesting deeper than 64 levels at byte 116"},
		{strings.Repeat("[", 1<<20), CodeParseError, "null", "nesting deeper than 64 levels at byte 64"},
		{`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, CodeInvalidRequest, "null", `member "id" appears twice`},
		{`{"jsonrpc":"2.0","id":3,"method":"ping","method":"tools/list"}`, CodeInvalidRequest, "3", `member "method" appears twice`},
		{`{"jsonrpc":"2.0","id":4,"method":"ping","\u006dethod":"tools/list"}`, CodeInvalidRequest, "4", `member "method" appears twice`},
		{`{"jsonrpc":"2.0","id":5,"method":"ping","params":{},"params":{}}`, CodeInvalidRequest, "5", `member "params" appears twice`},
		{`{"jsonrpc":"2.0","id":6,"method":"ping","` + strings.Repeat("k", 300) + `":1,"` + strings.Repeat("k", 300) + `":2}`, CodeInvalidRequest, "6", `"` + strings.Repeat("k", 64) + `…" appears twice`},
	} {
		_, id, perr := Parse([]byte(c.line))
		if perr == nil {
			t.Errorf("%.80q was accepted", c.line)
			continue
		}
		if perr.Code != c.code || string(id) != c.id || !strings.Contains(perr.Message, c.reason) {
			t.Errorf("%.80q: %d %q id %s, want %d with %q, id %s", c.line, perr.Code, perr.Message, id, c.code, c.reason, c.id)
		}
		out := AppendError(nil, id, perr)
		if !utf8.Valid(out) || !json.Valid(out) || bytes.IndexByte(out, 0) >= 0 {
			t.Errorf("%.80q: the error response is not clean JSON: %q", c.line, out)
		}
	}
}

func TestParseAccepts(t *testing.T) {
	for _, c := range []struct {
		line string
		kind Kind
		id   string
	}{
		{nested(MaxDepth), KindRequest, "1"},
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, KindRequest, "9007199254740993"},
		{`{"jsonrpc":"2.0","id":1e2,"method":"ping"}`, KindRequest, "1e2"},
		{`{"jsonrpc":"2.0","id":-0.50,"method":"ping"}`, KindRequest, "-0.50"},
		{`{"jsonrpc":"2.0","id":"\u0000\ud800","method":"ping"}`, KindRequest, `"\u0000\ud800"`},
		// Nested objects may reuse the top level's keys; only repeats within
		// one object are refused, and params' own are checked by the caller.
		{`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"id":1,"method":"x","jsonrpc":"1"}}`, KindRequest, "2"},
		{`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":{"b":1},"c":[{"b":2}]}}`, KindRequest, "2"},
		{"\t {\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\r", KindNotification, ""},
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, KindResponse, "7"},
		{`{"jsonrpc":"2.0","id":"x\"y","method":"a\\b"}`, KindRequest, `"x\"y"`},
	} {
		m, _, perr := Parse([]byte(c.line))
		if perr != nil {
			t.Errorf("%.80q refused: %s", c.line, perr.Message)
			continue
		}
		if m.Kind != c.kind || string(m.ID) != c.id {
			t.Errorf("%.80q: kind %d id %s, want %d %s", c.line, m.Kind, m.ID, c.kind, c.id)
		}
	}
}

func TestCheckKeys(t *testing.T) {
	known := []string{"method", "id"}
	for obj, want := range map[string]string{
		`{"a":1,"b":{"a":1},"a":2}`:     "a: duplicate key",
		`{"a":"x,\"b\":1","b":1}`:       "",
		`{"a":[{"b":1},{"b":1}],"c":1}`: "",
		`{"\u0041":1,"A":2}`:            "A: duplicate key",
		`{"a":1,"A":2}`:                 "",
		`[{"a":1,"a":1}]`:               "",
		`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k3":0}`: "k3: duplicate key",
		// Case variants of the keys we read are refused wherever they
		// stand; of other keys, left alone.
		`{"method":"ping","Method":"tools/list"}`: `Method: differs from "method" only by case; keys are matched exactly`,
		`{"ID":1}`:                       `ID: differs from "id" only by case; keys are matched exactly`,
		`{"\u004dethod":"x"}`:            `Method: differs from "method" only by case; keys are matched exactly`,
		`{"x":{"Method":1},"Id2":1}`:     "",
		`{"method":1,"method":2,"Id":1}`: "method: duplicate key",
	} {
		got := ""
		if kp, bad := CheckKeys([]byte(obj), known); bad {
			got = kp.Key + ": " + kp.Reason
		}
		if got != want {
			t.Errorf("CheckKeys(%s) = %q, want %q", obj, got, want)
		}
	}
}

// A member that is a known one but for case is refused, never ignored:
// encoding/json and other lenient readers would take it for the real one.
func TestParseRefusesCaseVariants(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping","Method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"METHOD":"tools/list","method":"ping"}`,
		`{"jsonrpc":"2.0","Jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","Params":{}}`,
	} {
		_, id, perr := Parse([]byte(line))
		if perr == nil || perr.Code != CodeInvalidRequest || !strings.Contains(perr.Message, "only by case") {
			t.Errorf("%s: %v, want -32600 naming the case variant", line, perr)
			continue
		}
		if string(id) != "1" {
			t.Errorf("%s: answered with id %s, want 1", line, id)
		}
	}
}

// Every answer echoes the id, so an id is bounded before anything else
// looks at it, and a refused one is never echoed.
func TestParseBoundsID(t *testing.T) {
	fits := `"` + strings.Repeat("a", MaxIDBytes-2) + `"`
	if _, _, perr := Parse([]byte(`{"jsonrpc":"2.0","id":` + fits + `,"method":"ping"}`)); perr != nil {
		t.Fatalf("an id of %d bytes was refused: %v", MaxIDBytes, perr)
	}
	for _, huge := range []string{`"` + strings.Repeat("a", MaxIDBytes-1) + `"`, strings.Repeat("9", 4<<20)} {
		line := `{"jsonrpc":"2.0","id":` + huge + `,"method":"ping"}`
		_, id, perr := Parse([]byte(line))
		if perr == nil || perr.Code != CodeInvalidRequest || !strings.Contains(perr.Message, "at most 256") {
			t.Fatalf("id of %d bytes: %v, want -32600 saying the bound", len(huge), perr)
		}
		if out := AppendError(nil, id, perr); len(out) > 300 {
			t.Fatalf("the refusal is %d bytes; it must not echo the id", len(out))
		}
	}
}

// FuzzParse: Parse never panics, accepts nothing encoding/json calls
// invalid, refuses every repeated top-level key, and whatever it answers
// is one clean JSON line.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
		`{"jsonrpc":"2.0","id":1,"id":1,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","Method":"x"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\x00\"}",
		nested(MaxDepth), nested(MaxDepth + 1),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, id, perr := Parse(line)
		if perr != nil {
			out := AppendError(nil, id, perr)
			if !utf8.Valid(out) || !json.Valid(out) || bytes.ContainsAny(out, "\x00\n") {
				t.Fatalf("error response is not one clean JSON line: %q", out)
			}
			if perr.Code != CodeParseError && perr.Code != CodeInvalidRequest {
				t.Fatalf("code %d for %q", perr.Code, line)
			}
			return
		}
		if !json.Valid(line) {
			t.Fatalf("accepted invalid JSON %q", line)
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(line, &top); err != nil {
			t.Fatalf("accepted a message that is not an object: %q", line)
		}
		if kp, bad := CheckKeys(bytes.TrimSpace(line), envelopeKeys); bad {
			t.Fatalf("accepted %q (%s): %q", kp.Key, kp.Reason, line)
		}
		switch m.Kind {
		case KindRequest, KindNotification:
			if m.Method == "" {
				t.Fatalf("a request without a method: %q", line)
			}
		case KindResponse:
			if m.ID == nil {
				t.Fatalf("a response without an id: %q", line)
			}
		}
		if m.ID != nil && !bytes.Equal(m.ID, top["id"]) {
			t.Fatalf("id %s, but the message says %s", m.ID, top["id"])
		}
		if out := AppendResultStart(nil, id); !json.Valid(append(append(out, "null"...), '}')) {
			t.Fatalf("result for id %s is not JSON", id)
		}
	})
}

// BenchmarkParse reads a typical tool call; BenchmarkInspect is the share
// of it spent on the checks sonic leaves to us.
func BenchmarkParse(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":"learn rust ownership"},"_meta":{"progressToken":7}}}`)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, perr := Parse(line); perr != nil {
			b.Fatal(perr)
		}
	}
}

func BenchmarkInspect(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":"learn rust ownership"},"_meta":{"progressToken":7}}}`)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if !inspect(line, MaxDepth, envelopeKeys).ok() {
			b.Fatal("refused")
		}
	}
}

func TestAppendStringMatchesSonic(t *testing.T) {
	cases := []string{"", "plain", "a\"b\\c", "\u2028\u2029", "\xff\xfe ok", "é日本", "<&>/"}
	for c := range 256 {
		cases = append(cases, string([]byte{'x', byte(c), 'y'}))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, r.IntN(600)) // past 64 bytes, the long path's words
		for i := range b {
			b[i] = byte(r.IntN(256))
			if r.IntN(2) == 0 {
				b[i] = byte(r.IntN(0x30))
			}
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		var want []byte
		if err := encoder.EncodeInto(&want, s, 0); err != nil {
			t.Fatal(err)
		}
		if got := AppendString([]byte("pre"), s); string(got) != "pre"+string(want) {
			t.Fatalf("AppendString(%q) = %q, sonic writes %q", s, got[3:], want)
		}
	}
}

// BenchmarkAppendString escapes a text block of the size get_sources
// answers with, beside sonic's encoder doing the same.
func BenchmarkAppendString(b *testing.B) {
	text := strings.Repeat("Bitcoin Core full node: the reference implementation; run it \"pruned\" to save disk.\n", 24)
	buf := make([]byte, 0, 4096)
	b.Run("AppendString", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			buf = AppendString(buf[:0], text)
		}
	})
	b.Run("sonic", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			buf = buf[:0]
			encoder.EncodeInto(&buf, text, 0)
		}
	})
}

func TestAppendFloatMatchesSonic(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	vals := []float64{0, 1, -1, 0.5, 0.1, 0.85, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789012345678901.0, 0.30000000000000004,
		math.SmallestNonzeroFloat64, math.MaxFloat64, math.Copysign(0, -1), 1.5e-10, 100, 1e15, 1e16, 1.0 / 3}
	for range 50000 {
		vals = append(vals, r.Float64(), r.Float64()*1e-5, math.Float64frombits(r.Uint64()), float64(r.IntN(1000))/100)
	}
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		want, err := sonic.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendFloat([]byte("pre"), v); string(got) != "pre"+string(want) {
			t.Fatalf("AppendFloat(%v) = %s, sonic writes %s", v, got[3:], want)
		}
	}
}
