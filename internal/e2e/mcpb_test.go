package e2e

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/mcpb"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// TestMCPBundle packs an MCP Bundle of the freshly built binary with
// release/mcpb/pack.sh, as a release does, and installs it as a host
// would: the official CLI (@anthropic-ai/mcpb, pinned in
// release/mcpb/package-lock.json) validates and unpacks it, the format's
// reference code works out the command and environment from the manifest
// and the user's settings (release/mcpb/hostconfig.mjs), and the bundled
// binary is started with exactly those and spoken to over stdio. Packing
// twice must give the same bytes.
//
// It runs three installs: with nothing entered (the embedded registry,
// public tools), with a token and its tokens file (a user tool answers),
// and with a registry file of the user's own (its curator answers).
func TestMCPBundle(t *testing.T) {
	root := testkit.Root()
	dir := filepath.Join(root, "release", "mcpb")
	node := needMCPBCLI(t, dir)
	plat, err := mcpb.ParsePlatform(runtime.GOOS + "-" + runtime.GOARCH)
	if err != nil || plat.OS == "windows" {
		t.Skipf("a bundle for %s/%s cannot be started by this test: %v", runtime.GOOS, runtime.GOARCH, err)
	}
	bin := testkit.Binary(t)
	cli := filepath.Join(dir, "node_modules", "@anthropic-ai", "mcpb", "dist", "cli", "cli.js")
	const version = "0.0.0-e2e"

	pack := func(out string) (string, string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(dir, "pack.sh"), "--version", "v"+version, "--platform", plat.String(), "--bin", bin, "--out", out)
		cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH=1767225600") // 2026-01-01
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.Output()
		if err != nil {
			t.Fatalf("pack.sh: %v\n%s", err, stderr.String())
		}
		bundle := filepath.Join(out, mcpb.BundleName(version, plat))
		data, err := os.ReadFile(bundle)
		if err != nil {
			t.Fatalf("pack.sh did not write %s: %v\n%s", bundle, err, stderr.String())
		}
		sum := sha256.Sum256(data)
		if got, want := strings.Fields(string(stdout)), hex.EncodeToString(sum[:]); len(got) != 2 || got[0] != want || got[1] != bundle {
			t.Errorf("pack.sh printed %q, want %s  %s", stdout, want, bundle)
		}
		return bundle, hex.EncodeToString(sum[:])
	}
	tmp := t.TempDir()
	bundle, sum1 := pack(filepath.Join(tmp, "a"))
	if _, sum2 := pack(filepath.Join(tmp, "b")); sum1 != sum2 {
		t.Errorf("packing the same binary twice gave %s and %s", sum1, sum2)
	}
	checkBundleFiles(t, bundle, bin, plat)

	unpacked := filepath.Join(tmp, "installed")
	if out, err := exec.Command(node, cli, "unpack", bundle, unpacked).CombinedOutput(); err != nil {
		t.Fatalf("mcpb unpack: %v\n%s", err, out)
	}
	if out, err := exec.Command(node, cli, "validate", filepath.Join(unpacked, "manifest.json")).CombinedOutput(); err != nil {
		t.Fatalf("mcpb validate: %v\n%s", err, out)
	}
	var manifest struct {
		Version string      `json:"version"`
		Tools   []mcpb.Tool `json:"tools"`
	}
	data, err := os.ReadFile(filepath.Join(unpacked, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &manifest); err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, tool := range manifest.Tools {
		listed = append(listed, tool.Name)
	}
	if manifest.Version != version {
		t.Errorf("the manifest says version %q, want %q", manifest.Version, version)
	}

	// Nothing entered: the embedded registry, the public tools.
	s := startBundled(t, node, dir, unpacked, `{}`)
	for _, v := range s.env {
		if v != "" {
			t.Errorf("with nothing entered the host sets %v; every setting should be empty", s.env)
		}
	}
	if want := filepath.Join(unpacked, plat.Binary()); s.command != want {
		t.Errorf("the host starts %s, want %s", s.command, want)
	}
	s.initialize()
	var tools struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	s.call("tools/list", `{}`, &tools)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if want := mcp.ListedFor(gen.TierPublic, mcp.Config{}); !slices.Equal(names, listed) || !slices.Equal(names, want) {
		t.Errorf("tools/list %v, the manifest %v, the public tier of a plain serve %v", names, listed, want)
	}
	var sources struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Slug    string `json:"slug"`
			Sources []any  `json:"sources"`
		} `json:"structuredContent"`
	}
	s.call("tools/call", `{"name":"get_sources","arguments":{"query":"learn rust"}}`, &sources)
	if sources.IsError || sources.StructuredContent.Slug != "rust-learning" || len(sources.StructuredContent.Sources) != 3 {
		t.Errorf("get_sources: %+v", sources)
	}
	s.close()

	// A token and its tokens file: the user tool explain_match answers.
	tokens := filepath.Join(tmp, "tokens.json")
	tok, err := exec.Command(bin, "token", "new", "--tokens", tokens, "--tier", "user", "--name", "bundle").Output()
	if err != nil {
		t.Fatal(err)
	}
	settings, _ := json.Marshal(map[string]string{"tokens_file": tokens, "token": strings.TrimSpace(string(tok))})
	s = startBundled(t, node, dir, unpacked, string(settings))
	s.initialize()
	var explained struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Matched string `json:"matched"`
		} `json:"structuredContent"`
	}
	s.call("tools/call", `{"name":"explain_match","arguments":{"query":"learn rust"}}`, &explained)
	if explained.IsError || explained.StructuredContent.Matched != "rust-learning" {
		t.Errorf("explain_match with the token entered: %+v", explained)
	}
	s.close()

	// A registry file of one's own: its curator answers get_provenance.
	node2 := filepath.Join(tmp, "node")
	if out, err := exec.Command(bin, "init", node2, "--name", "Bundle Tester").CombinedOutput(); err != nil {
		t.Fatalf("3gs init: %v\n%s", err, out)
	}
	settings, _ = json.Marshal(map[string]string{"registry_path": filepath.Join(node2, "registry.json")})
	s = startBundled(t, node, dir, unpacked, string(settings))
	s.initialize()
	var prov struct {
		StructuredContent struct {
			Curator  struct{ Name string } `json:"curator"`
			Verified bool                  `json:"verified"`
		} `json:"structuredContent"`
	}
	s.call("tools/call", `{"name":"get_provenance","arguments":{}}`, &prov)
	if prov.StructuredContent.Curator.Name != "Bundle Tester" || !prov.StructuredContent.Verified {
		t.Errorf("get_provenance with a registry file entered: %+v", prov)
	}
	s.close()
}

// needMCPBCLI returns node, skipping (failing in CI) when the pinned mcpb
// CLI is not installed beside pack.sh.
func needMCPBCLI(t *testing.T, dir string) string {
	t.Helper()
	return testkit.NeedNodePackage(t, dir, "@anthropic-ai/mcpb", "npm ci --prefix release/mcpb")
}

// checkBundleFiles reads the bundle with Go's own zip reader: exactly the
// manifest and the binary, which is the one built, executable.
func checkBundleFiles(t *testing.T, bundle, bin string, plat mcpb.Platform) {
	t.Helper()
	z, err := zip.OpenReader(bundle)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	var names []string
	for _, f := range z.File {
		names = append(names, f.Name)
		if f.Name != plat.Binary() {
			continue
		}
		if f.Mode().Perm() != 0o755 {
			t.Errorf("%s has mode %v in the bundle", f.Name, f.Mode().Perm())
		}
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		packed, _ := io.ReadAll(r)
		r.Close()
		built, _ := os.ReadFile(bin)
		if !bytes.Equal(packed, built) {
			t.Errorf("%s in the bundle is not the binary packed", f.Name)
		}
	}
	slices.Sort(names)
	if want := []string{"manifest.json", plat.Binary()}; !slices.Equal(names, want) {
		t.Errorf("the bundle holds %v, want %v", names, want)
	}
}

// bundled is the bundled server, started as the host would start it.
type bundled struct {
	t       *testing.T
	command string
	env     map[string]string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	out     *bufio.Reader
	stderr  *bytes.Buffer
	id      int
}

// startBundled asks hostconfig.mjs how a host runs the unpacked bundle
// with the given settings, and runs that: the command, its arguments, and
// the environment the manifest adds to the host's own.
func startBundled(t *testing.T, node, dir, unpacked, settings string) *bundled {
	t.Helper()
	out, err := exec.Command(node, filepath.Join(dir, "hostconfig.mjs"), unpacked, settings).Output()
	if err != nil {
		t.Fatalf("hostconfig.mjs: %v", err)
	}
	var cfg struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
	}
	if err := json.Unmarshal(out, &cfg); err != nil {
		t.Fatalf("hostconfig.mjs printed %s: %v", out, err)
	}
	s := &bundled{t: t, command: cfg.Command, env: cfg.Env, stderr: new(bytes.Buffer)}
	s.cmd = exec.Command(cfg.Command, cfg.Args...)
	// The host's environment, without any 3gs settings of the machine the
	// test runs on, then the manifest's.
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(name, "THREEGS_") && name != "REGISTRY_PATH" && name != "MATCH_THRESHOLD" {
			s.cmd.Env = append(s.cmd.Env, kv)
		}
	}
	for k, v := range cfg.Env {
		s.cmd.Env = append(s.cmd.Env, k+"="+v)
	}
	// Peers' copies of an embedded registry go to the user cache directory.
	s.cmd.Env = append(s.cmd.Env, "XDG_CACHE_HOME="+t.TempDir())
	s.cmd.Stderr = s.stderr
	s.stdin, _ = s.cmd.StdinPipe()
	stdout, _ := s.cmd.StdoutPipe()
	s.out = bufio.NewReaderSize(stdout, 1<<20)
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", cfg.Command, err)
	}
	t.Cleanup(func() { s.cmd.Process.Kill(); s.cmd.Wait() })
	return s
}

func (s *bundled) initialize() {
	s.t.Helper()
	s.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"3gs-mcpb-test","version":"1"}}`, nil)
	fmt.Fprintln(s.stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// call sends one request and decodes its result into out; an error
// answer, or none within ten seconds, fails the test.
func (s *bundled) call(method, params string, out any) {
	s.t.Helper()
	s.id++
	fmt.Fprintf(s.stdin, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", s.id, method, params)
	type read struct {
		line string
		err  error
	}
	got := make(chan read, 1)
	go func() {
		line, err := s.out.ReadString('\n')
		got <- read{line, err}
	}()
	var r read
	select {
	case r = <-got:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		s.t.Fatalf("%s: no answer within 10s; stderr:\n%s", method, s.stderr.String())
	}
	if r.err != nil {
		s.t.Fatalf("%s: %v; stderr:\n%s", method, r.err, s.stderr.String())
	}
	var msg struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.line), &msg); err != nil || msg.ID != s.id || msg.Result == nil {
		s.t.Fatalf("%s: answer %s (%v); stderr:\n%s", method, r.line, err, s.stderr.String())
	}
	if out != nil {
		if err := json.Unmarshal(msg.Result, out); err != nil {
			s.t.Fatalf("%s: %v: %s", method, err, msg.Result)
		}
	}
}

// close ends the session as a host does, by closing stdin; the server
// must then exit 0.
func (s *bundled) close() {
	s.t.Helper()
	s.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			s.t.Errorf("the bundled server exited with %v; stderr:\n%s", err, s.stderr.String())
		}
	case <-time.After(10 * time.Second):
		s.t.Errorf("the bundled server did not exit within 10s of stdin closing")
	}
}
