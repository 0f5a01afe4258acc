package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
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

func TestDuplicateKey(t *testing.T) {
	for obj, want := range map[string]string{
		`{"a":1,"b":{"a":1},"a":2}`:     "a",
		`{"a":"x,\"b\":1","b":1}`:       "",
		`{"a":[{"b":1},{"b":1}],"c":1}`: "",
		`{"\u0041":1,"A":2}`:            "A",
		`{"a":1,"A":2}`:                 "",
		`[{"a":1,"a":1}]`:               "",
		`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k3":0}`: "k3",
	} {
		got, dup := DuplicateKey([]byte(obj))
		if got != want || dup != (want != "") {
			t.Errorf("DuplicateKey(%s) = %q %v, want %q", obj, got, dup, want)
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
		if _, dup := DuplicateKey(bytes.TrimSpace(line)); dup {
			t.Fatalf("accepted a repeated key: %q", line)
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
		if !inspect(line, MaxDepth).ok() {
			b.Fatal("refused")
		}
	}
}
