package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/testserver"

	"golang.org/x/tools/txtar"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/jsonrpc"
	"github.com/three-good-sources/3gs/internal/mcp"
)

var update = flag.Bool("update", false, "rewrite the -- server -- files of testdata/*.txtar from the current output")

// newServer serves stub tools (testserver.Stubs), whose answers are fixed,
// over the frozen test registry, signed, with the default threshold: the
// transcripts test the protocol, so neither the registry's content nor
// the matcher's scores may change them.
func newServer(t testing.TB) *mcp.Server {
	t.Helper()
	return testserver.New(t, testserver.Options{Signed: true, Stub: true}).Server
}

// shippedServer serves the registry 3gs ships, signed, with the real
// tools, as `3gs serve` does with no flags: for the one end-to-end
// transcript in testdata/shipped, which changes with registry.json and
// with the matcher, by design.
func shippedServer(t testing.TB) *mcp.Server {
	t.Helper()
	return testserver.New(t, testserver.Options{Shipped: true, Signed: true}).Server
}

// exchange feeds one client line to a session the way the stdio transport
// does, and returns the answer line or nil.
func exchange(sess *mcp.Session, line []byte) []byte {
	m, id, perr := jsonrpc.Parse(line)
	if perr != nil {
		return jsonrpc.AppendError(nil, id, perr)
	}
	if m.Kind != jsonrpc.KindRequest {
		return nil
	}
	return sess.Handle(context.Background(), m, nil)
}

// TestTranscripts replays testdata/*.txtar against stub tools, and the
// one end-to-end golden testdata/shipped/*.txtar against the shipped
// registry: each archive is one session.
// The client file's lines go in one at a time (blank lines and lines
// starting with # are skipped); the server file holds the answers, each
// pretty-printed, and every answer must equal the next one there.
//
// A tools/list answer is written with its tools array replaced by
// "$TOOLS_LIST:TIER", the tools/list the generated table gives that tier:
// the manifest is the generator's to check (TestGenIsFresh), and a new
// tool must not change a transcript about the protocol.
func TestTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txtar")
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata")
	}
	replay(t, newServer(t), files)
	// Exactly one transcript may depend on the shipped data: more would
	// tie tests about the protocol to registry.json again.
	shipped, _ := filepath.Glob("testdata/shipped/*.txtar")
	if len(shipped) != 1 {
		t.Fatalf("testdata/shipped holds %d transcripts, want the one end-to-end golden", len(shipped))
	}
	replay(t, shippedServer(t), shipped)
}

// replay runs each transcript of files against srv as a subtest.
func replay(t *testing.T, srv *mcp.Server, files []string) {
	for _, file := range files {
		t.Run(strings.TrimSuffix(strings.TrimPrefix(file, "testdata/"), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			client, want := section(ar, "client"), section(ar, "server")
			if client == nil {
				t.Fatal("no -- client -- file")
			}
			sess := srv.NewSession()
			var got [][]byte
			for _, line := range strings.Split(string(client), "\n") {
				if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
					continue
				}
				if out := exchange(sess, []byte(line)); out != nil {
					got = append(got, abbreviate(srv, out))
				}
			}
			if *update {
				var server bytes.Buffer
				for i, g := range got {
					if i > 0 {
						server.WriteByte('\n')
					}
					if err := json.Indent(&server, g, "", "  "); err != nil {
						t.Fatalf("answer %d is not JSON: %v\n%s", i+1, err, g)
					}
					server.WriteByte('\n')
				}
				ar.Files = []txtar.File{{Name: "client", Data: client}, {Name: "server", Data: server.Bytes()}}
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			wanted, err := answers(want)
			if err != nil {
				t.Fatalf("the server file: %v", err)
			}
			for i, g := range got {
				if i >= len(wanted) {
					t.Fatalf("answer %d is not in the transcript (run with -update to accept):\n%s", i+1, g)
				}
				if !bytes.Equal(g, wanted[i]) {
					t.Fatalf("answer %d differs (run with -update to accept):\ngot:  %s\nwant: %s", i+1, g, wanted[i])
				}
			}
			if len(got) != len(wanted) {
				t.Fatalf("got %d answers, want %d (run with -update to accept)", len(got), len(wanted))
			}
		})
	}
}

// section is the named file of a txtar archive, or nil.
func section(ar *txtar.Archive, name string) []byte {
	for _, f := range ar.Files {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}

// answers reads a sequence of pretty-printed JSON values, compacted.
func answers(text []byte) ([][]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	var out [][]byte
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return nil, err
		}
		out = append(out, b.Bytes())
	}
}

// abbreviate replaces a tier's whole tools/list array with its marker,
// naming the tier that sees that list on srv.
func abbreviate(srv *mcp.Server, answer []byte) []byte {
	for tier := range gen.NumTiers {
		answer = bytes.ReplaceAll(answer, srv.ToolsList(gen.Tier(tier)), []byte(`"$TOOLS_LIST:`+gen.Tier(tier).String()+`"`))
	}
	return answer
}
