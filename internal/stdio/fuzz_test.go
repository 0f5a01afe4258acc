package stdio

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/testserver"

	"github.com/three-good-sources/3gs/internal/wirecheck"
)

// fuzzMaxBytes is the line limit while fuzzing: small, so the fuzzer
// reaches it.
const fuzzMaxBytes = 2048

// FuzzServe is the whole stdio server on arbitrary bytes: it never panics
// or hangs, every line it writes is one well-formed JSON-RPC response,
// every clean request is answered exactly once under its own id, clean
// notifications and client responses get nothing, and nothing else gets
// more than one answer. The expectations come from encoding/json, not
// from the parser under test.
func FuzzServe(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add([]byte(s))
	}
	srv := testserver.New(f, testserver.Options{})
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		if err := Serve(context.Background(), srv.NewSession(), bytes.NewReader(in), &out, Options{MaxMessageBytes: fuzzMaxBytes, MaxInFlight: 4}); err != nil {
			t.Fatalf("Serve: %v", err)
		}
		want := expect(in)
		got := map[string]int{}
		nullIDs := 0
		for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if line == "" {
				continue
			}
			id, err := wirecheck.CheckResponse([]byte(line))
			if err != nil {
				t.Fatal(err)
			}
			if id == "null" {
				nullIDs++
			} else {
				got[id]++
			}
		}
		for id, n := range got {
			if lo, hi := want.exact[id], want.exact[id]+want.maybe[id]; n > hi || n < lo && !want.cancelled[id] {
				t.Fatalf("id %s answered %d times, want %d to %d\ninput: %q\noutput: %s", id, n, lo, hi, in, out.String())
			}
		}
		for id, n := range want.exact {
			if got[id] == 0 && n > 0 && !want.cancelled[id] {
				t.Fatalf("request %s was not answered\ninput: %q\noutput: %s", id, in, out.String())
			}
		}
		if nullIDs > want.unclean {
			t.Fatalf("%d answers with a null id for %d unclean lines\ninput: %q\noutput: %s", nullIDs, want.unclean, in, out.String())
		}
	})
}

// fuzzSeeds are the client lines of the protocol transcripts, one session
// each, plus framing cases of this transport.
func fuzzSeeds(f *testing.F) []string {
	files, _ := filepath.Glob("../mcp/testdata/*.txtar")
	var seeds []string
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		_, client, _ := strings.Cut(string(data), "-- client --\n")
		client, _, _ = strings.Cut(client, "-- server --")
		seeds = append(seeds, client)
	}
	return append(seeds,
		initLine+"\n"+`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":"rust"}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		initLine+"\n"+`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"+`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		initLine+"\r\n\n  \n"+`{"jsonrpc":"2.0","id":"x","method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`+strings.Repeat("p", fuzzMaxBytes)+`"}}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\x00ng\"}\n\xff\xfe\n",
	)
}

// expectation is what an input's lines call for.
type expectation struct {
	exact     map[string]int  // id → answers certainly due (clean requests)
	maybe     map[string]int  // id → lines with this id that may be refused under it
	cancelled map[string]bool // ids a clean cancellation names: may go unanswered
	unclean   int             // lines that may be answered with a null id
}

func expect(in []byte) expectation {
	e := expectation{exact: map[string]int{}, maybe: map[string]int{}, cancelled: map[string]bool{}}
	for _, line := range bytes.Split(in, []byte("\n")) {
		if len(line) > fuzzMaxBytes {
			e.unclean++
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		kind, id, cancel := wirecheck.Classify(line)
		switch kind {
		case wirecheck.CleanRequest:
			e.exact[id]++
		case wirecheck.CleanNotification:
			if cancel != "" {
				e.cancelled[cancel] = true
			}
		case wirecheck.CleanResponse:
		default:
			e.unclean++
			if id != "" {
				e.maybe[id]++
			}
		}
	}
	return e
}
