package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/testserver"

	"github.com/three-good-sources/3gs/internal/evalset"
	"github.com/three-good-sources/3gs/internal/jsonrpc"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/testkit"
)

var benchQueries = []string{
	"how do I run a bitcoin full node", "self host my email server", "learn rust ownership",
	"best password manager", "harden ssh on linux", "threat modeling with stride",
	"home assistant without cloud", "build an mcp server in go",
}

// benchSession serves the shared fixture registry (10 categories), as the
// stdio load benchmark does.
func benchSession(b *testing.B) *mcp.Session {
	data, err := os.ReadFile(testkit.SharedRegistry(b))
	if err != nil {
		b.Fatal(err)
	}
	return sessionOn(b, data)
}

// sessionOn is an initialized session serving the registry document data.
func sessionOn(b *testing.B, data []byte) *mcp.Session {
	srv := testserver.New(b, testserver.Options{Registry: data})
	sess := srv.NewSession()
	m, _, _ := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`))
	sess.Handle(context.Background(), m, nil)
	return sess
}

// BenchmarkHandle measures parse + handle of one request, without
// transport. mix-v1 is get_sources over the benchmark mix (evalset.MixV1)
// on its registry: the figure the request path's devices (pools, unsafe
// conversions) are kept or dropped on.
func BenchmarkHandle(b *testing.B) {
	sess := benchSession(b)
	mix := evalset.MixV1("../..")
	mixData, err := os.ReadFile(mix.Registry)
	if err != nil {
		b.Fatal(err)
	}
	questions, err := mix.Questions()
	if err != nil {
		b.Fatal(err)
	}
	var mixLines [][]byte
	for i, q := range questions {
		arg, _ := json.Marshal(q)
		mixLines = append(mixLines, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":%s}}}`, i, arg))
	}
	var lines [][]byte
	for i, q := range benchQueries {
		lines = append(lines, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":%q}}}`, i, q))
	}
	cases := map[string][][]byte{
		"tools/list":  {[]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)},
		"get_sources": lines,
		// By slug: no matching, so what remains is the protocol around it.
		"get_sources_slug": {[]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_sources","arguments":{"slug":"rust-learning"}}}`)},
		"mix-v1":           mixLines,
	}
	mixSess := sessionOn(b, mixData)
	for name, in := range cases {
		sess := sess
		if name == "mix-v1" {
			sess = mixSess
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 16<<10) // the transport reuses buffers too
			i := 0
			for b.Loop() {
				m, _, err := jsonrpc.Parse(in[i%len(in)])
				if err != nil {
					b.Fatal(err)
				}
				if out := sess.Handle(context.Background(), m, buf[:0]); len(out) == 0 {
					b.Fatal("no answer")
				}
				i++
			}
		})
	}
}

// getSourcesMix is a realistic mix of get_sources questions on the frozen
// Basic registry, by kind: TestGetSourcesMix checks each answers as its
// kind says, so the benchmark keeps measuring what it claims to.
var getSourcesMix = []struct{ kind, query string }{
	{"on-topic", "learn rust programming"},
	{"on-topic", "how to harden a linux server"},
	{"on-topic", "postgres slow query"},
	{"on-topic", "how to write a bash script"},
	{"typo", "lern rust programing"},
	{"typo", "postgress slow qeury"},
	{"typo", "harden linx server ssh"},
	{"off-topic", "best pizza in naples"},
	{"off-topic", "quantum physics supercollider"},
	{"not-confident", "learn programming"},
	{"not-confident", "server setup"},
}

// getSourcesMixLines are the tools/call requests of getSourcesMix.
func getSourcesMixLines() [][]byte {
	var lines [][]byte
	for i, q := range getSourcesMix {
		lines = append(lines, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":%q}}}`, i, q.query))
	}
	return lines
}

// mixSession serves frozen.Basic.
func mixSession(tb testing.TB) *mcp.Session {
	srv := testserver.New(tb, testserver.Options{Registry: frozen.Registry(frozen.Basic)})
	sess := srv.NewSession()
	m, _, _ := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`))
	sess.Handle(context.Background(), m, nil)
	return sess
}

// TestGetSourcesMix holds each question of the benchmark's mix to its
// kind: a confident answer for on-topic questions and typos, a tool error
// with alternatives or candidates for not-confident ones, and one with
// neither a category nor a close one for off-topic ones.
func TestGetSourcesMix(t *testing.T) {
	sess := mixSession(t)
	for i, line := range getSourcesMixLines() {
		m, _, err := jsonrpc.Parse(line)
		if err != nil {
			t.Fatal(err)
		}
		var resp struct {
			Result struct {
				IsError    bool `json:"isError"`
				Structured struct {
					Slug         *string           `json:"slug"`
					Alternatives []json.RawMessage `json:"alternatives"`
					Candidates   []json.RawMessage `json:"candidates"`
				} `json:"structuredContent"`
			} `json:"result"`
		}
		out := sess.Handle(context.Background(), m, nil)
		if err := json.Unmarshal(out, &resp); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		r, q := &resp.Result, getSourcesMix[i]
		var got string
		switch {
		case !r.IsError && r.Structured.Slug != nil:
			got = "answer"
		case r.IsError && len(r.Structured.Alternatives)+len(r.Structured.Candidates) > 0:
			got = "not-confident"
		case r.IsError:
			got = "off-topic"
		}
		want := map[string]string{"on-topic": "answer", "typo": "answer", "off-topic": "off-topic", "not-confident": "not-confident"}[q.kind]
		if got != want {
			t.Errorf("%q (%s): answered as %q, want %q:\n%s", q.query, q.kind, got, want, out)
		}
	}
}

// BenchmarkGetSourcesMix measures get_sources through the whole dispatch
// path (parse, Session.Handle, the handler, its text and structured
// content written into the response) over getSourcesMix, one question
// after another.
func BenchmarkGetSourcesMix(b *testing.B) {
	sess := mixSession(b)
	lines := getSourcesMixLines()
	b.ReportAllocs()
	buf := make([]byte, 0, 16<<10)
	i := 0
	for b.Loop() {
		m, _, err := jsonrpc.Parse(lines[i%len(lines)])
		if err != nil {
			b.Fatal(err)
		}
		if out := sess.Handle(context.Background(), m, buf[:0]); len(out) == 0 {
			b.Fatal("no answer")
		}
		i++
	}
}
