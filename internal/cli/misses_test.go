package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/frozen"
)

// serveCalls runs `3gs serve` in-process over stdio with one get_sources
// call per argument object, and returns stdout and stderr.
func serveCalls(t *testing.T, environ map[string]string, args []string, calls ...string) (string, string) {
	t.Helper()
	in := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	for i, c := range calls {
		in += fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_sources","arguments":%s,"_meta":{"io.3gs/token":"not-logged-secret"}}}`+"\n", i+1, c)
	}
	var out, errOut bytes.Buffer
	env := &Env{Stdin: strings.NewReader(in), Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return environ[k] }}
	if !slices.Contains(args, "--registry") {
		args = append([]string{"--registry", frozenRegistry(t)}, args...)
	}
	if code := Run(context.Background(), append([]string{"serve"}, args...), env); code != ExitOK {
		t.Fatalf("serve: exit %d\n%s", code, errOut.String())
	}
	return out.String(), errOut.String()
}

// The curator's loop: serve logs the queries, misses turns the log into a
// to-do list, and once the registry answers a query, misses --registry
// drops it.
func TestQueryLogAndMisses(t *testing.T) {
	log := filepath.Join(t.TempDir(), "queries.jsonl")
	calls := []string{
		`{"query":"harden my linux server"}`,
		`{"query":"keeping my home network's secrets safe"}`,
		`{"query":"Keeping my home   network's secrets safe"}`,
		`{"query":"quantum chromodynamics"}`,
		`{"slug":"rust-learning"}`,
		`{"slug":"rust-lerning"}`,
		`{"query":""}`,
		// Refused by the decoder with -32602: never reach the handler or the log.
		`{}`,
		`{"query":"learn rust","slug":"rust-learning"}`,
	}
	// The flag, and its environment twin.
	serveCalls(t, nil, []string{"--query-log", log}, calls[:4]...)
	serveCalls(t, map[string]string{"THREEGS_QUERY_LOG": log}, nil, calls[4:]...)

	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 6 { // the empty query and the refused calls are not logged
		t.Fatalf("%d lines, want 6:\n%s", len(lines), data)
	}
	for _, want := range []string{`"outcome":"matched"`, `"outcome":"candidates"`, `"outcome":"slug"`, `"outcome":"unknown_slug"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("no line with %s:\n%s", want, data)
		}
	}
	if strings.Contains(string(data), "not-logged-secret") || strings.Contains(string(data), `"t"`) {
		t.Errorf("the log holds the token or the client's name:\n%s", data)
	}

	code, out, errOut := run(t, nil, "misses", log, "--registry", frozenRegistry(t))
	if code != ExitOK {
		t.Fatalf("misses: exit %d\n%s", code, errOut)
	}
	// The repeated question (spelled two ways) is one entry asked twice,
	// and the answered and by-slug calls are not misses.
	if !strings.Contains(out, `2×  "keeping my home network's secrets safe"`) || strings.Contains(out, "harden my linux server") || strings.Contains(out, "rust-lerning") {
		t.Errorf("misses:\n%s", out)
	}
	if !strings.Contains(out, "To do: ") || !strings.HasPrefix(out, "3 of 6 logged calls got no confident answer") {
		t.Errorf("misses:\n%s", out)
	}

	// A registry that now has the words: rescored, the question drops off.
	reg := filepath.Join(t.TempDir(), "registry.json")
	src := frozen.Registry(frozen.Basic)
	edited := strings.Replace(string(src), `"query_patterns": [`, `"query_patterns": ["keeping my home network secrets safe", `, 1)
	os.WriteFile(reg, []byte(edited), 0o644)
	code, out, errOut = run(t, nil, "misses", log, "--registry", reg)
	if code != ExitOK || strings.Contains(out, "secrets safe") || !strings.Contains(out, "quantum chromodynamics") {
		t.Errorf("misses --registry: exit %d\n%s%s", code, out, errOut)
	}

	if code, _, errOut := run(t, nil, "misses", filepath.Join(t.TempDir(), "none.jsonl")); code != ExitFail || !strings.Contains(errOut, "--query-log") {
		t.Errorf("missing log: exit %d %s", code, errOut)
	}
}

// A file that is not a query log is refused, an empty one says nothing
// was logged, and neither claims that every query was answered.
func TestMissesOnGarbageAndEmptyLogs(t *testing.T) {
	dir := t.TempDir()
	garbage, empty := filepath.Join(dir, "notes.txt"), filepath.Join(dir, "queries.jsonl")
	os.WriteFile(garbage, []byte("shopping list\nmilk\n{\"query\": 1}\n"), 0o644)
	os.WriteFile(empty, nil, 0o644)
	if code, out, errOut := run(t, nil, "misses", garbage); code != ExitFail || !strings.Contains(errOut, "is not a query log") || strings.Contains(out, "every query") {
		t.Errorf("garbage: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run(t, nil, "misses", empty); code != ExitOK || !strings.Contains(out, "No calls logged") || strings.Contains(out, "every query") {
		t.Errorf("empty: exit %d\n%s%s", code, out, errOut)
	}
}

// A question far from every category is not put under the least far one
// ("how to learn french" under an espresso category): it has no good home.
func TestMissesHasAFloorForAHome(t *testing.T) {
	log := filepath.Join(t.TempDir(), "queries.jsonl")
	serveCalls(t, nil, []string{"--query-log", log}, `{"query":"how to learn french"}`, `{"query":"how to learn french"}`)
	code, out, errOut := run(t, nil, "misses", log, "--registry", frozenRegistry(t))
	if code != ExitOK || !strings.Contains(out, "no good home") || !strings.Contains(out, "consider a new category") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	// Even with no floor: no category shares a word with it, so none is
	// its home (get_sources offered it no candidate either).
	if code, out, _ := run(t, nil, "misses", log, "--registry", frozenRegistry(t), "--home-floor", "0"); code != ExitOK || !strings.Contains(out, "no good home") {
		t.Errorf("--home-floor 0:\n%s", out)
	}
}

// A question that shares a word with a category goes under it when its
// score reaches the floor, and has no good home below it.
func TestMissesFloorForAGroundedQuery(t *testing.T) {
	log := filepath.Join(t.TempDir(), "queries.jsonl")
	serveCalls(t, nil, []string{"--query-log", log}, `{"query":"rust belt history"}`)
	if code, out, errOut := run(t, nil, "misses", log, "--registry", frozenRegistry(t), "--home-floor", "0.01"); code != ExitOK || !strings.Contains(out, "rust-learning (Learning Rust): 1 query") {
		t.Errorf("floor 0.01: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run(t, nil, "misses", log, "--registry", frozenRegistry(t), "--home-floor", "0.99"); code != ExitOK || !strings.Contains(out, "no good home") {
		t.Errorf("floor 0.99: exit %d\n%s%s", code, out, errOut)
	}
}

func TestServeRefusesAQueryLogItCannotWrite(t *testing.T) {
	var out, errOut bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
	if code := Run(context.Background(), []string{"serve", "--query-log", t.TempDir()}, env); code == ExitOK || !strings.Contains(errOut.String(), "--query-log") {
		t.Errorf("a directory as query log: exit %d\n%s", code, errOut.String())
	}
}
