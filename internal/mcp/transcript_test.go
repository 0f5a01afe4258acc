package mcp_test

import (
	"bytes"
	"context"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/internal/jsonrpc"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/tools"
)

var update = flag.Bool("update", false, "rewrite the -- server -- sections of testdata/*.txtar from the current output")

// newServer serves our embedded registry, signed, with the default
// threshold, as `3gs serve` does with no flags.
func newServer(t testing.TB) *mcp.Server {
	t.Helper()
	reg, err := registry.Load(threegs.DefaultRegistry)
	if err != nil {
		t.Fatal(err)
	}
	h := tools.New(tools.Config{
		Registry: reg, Matcher: matcher.New(reg), Threshold: tools.DefaultThreshold,
		Signature: signature.Check(reg, threegs.DefaultSignature),
		Files:     signature.Files{Builtin: true, Where: "the 3gs source tree"},
	})
	return mcp.NewServer(mcp.Config{Handlers: h, Version: "test", Log: slog.New(slog.DiscardHandler)})
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

// TestTranscripts replays testdata/*.txtar: each file is one session; the
// client section's lines go in one at a time (blank lines and lines
// starting with # are skipped), and every answer must equal the server
// section's lines in order.
func TestTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txtar")
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata")
	}
	srv := newServer(t)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			comment, sections := parseTxtar(data)
			client, ok := sections["client"]
			if !ok {
				t.Fatal("no -- client -- section")
			}
			sess := srv.NewSession()
			var got []string
			for _, line := range strings.Split(client, "\n") {
				if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
					continue
				}
				if out := exchange(sess, []byte(line)); out != nil {
					got = append(got, string(out))
				}
			}
			gotText := strings.Join(got, "\n") + "\n"
			if *update {
				out := comment + "-- client --\n" + client + "-- server --\n" + gotText
				if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := sections["server"]
			if gotText != want {
				wantLines := strings.Split(want, "\n")
				for i, g := range got {
					if i >= len(wantLines) || g != wantLines[i] {
						w := ""
						if i < len(wantLines) {
							w = wantLines[i]
						}
						t.Fatalf("answer %d differs (run with -update to accept):\ngot:  %s\nwant: %s", i+1, g, w)
					}
				}
				t.Fatalf("got %d answers, want %d (run with -update to accept)", len(got), len(strings.Split(strings.TrimSuffix(want, "\n"), "\n")))
			}
		})
	}
}

// parseTxtar splits a txtar archive into its comment and named sections.
func parseTxtar(data []byte) (comment string, sections map[string]string) {
	sections = map[string]string{}
	name := ""
	var cur bytes.Buffer
	flush := func() {
		if name == "" {
			comment = cur.String()
		} else {
			sections[name] = cur.String()
		}
		cur.Reset()
	}
	for _, line := range strings.SplitAfter(string(data), "\n") {
		trimmed := strings.TrimRight(line, "\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			flush()
			name = strings.TrimSpace(trimmed[3 : len(trimmed)-3])
			continue
		}
		cur.WriteString(line)
	}
	flush()
	return comment, sections
}
