package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/mcpb"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// serverjson reads the bundles it is given, names each by its file, and
// writes their digests; a bundle of another version is refused.
func TestServerJSONCommand(t *testing.T) {
	dir := t.TempDir()
	var files []string
	sums := map[string]string{}
	for _, p := range mcpb.Platforms {
		path := filepath.Join(dir, mcpb.BundleName("1.4.0", p))
		if err := os.WriteFile(path, []byte("bundle for "+p.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte("bundle for " + p.String()))
		sums[mcpb.ReleaseURL("1.4.0", p)] = hex.EncodeToString(sum[:])
		files = append(files, path)
	}
	in := filepath.Join(testkit.Root(), "server.json")
	var out bytes.Buffer
	if err := run(append([]string{"serverjson", "-version", "v1.4.0", "-in", in}, files...), &out); err != nil {
		t.Fatal(err)
	}
	var sj struct {
		Packages []struct{ Identifier, FileSHA256 string }
	}
	if err := json.Unmarshal(out.Bytes(), &sj); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range sj.Packages {
		if want, ok := sums[p.Identifier]; ok {
			n++
			if p.FileSHA256 != want {
				t.Errorf("%s: %s, want %s", p.Identifier, p.FileSHA256, want)
			}
		}
	}
	if n != len(mcpb.Platforms) {
		t.Errorf("%d bundles stamped:\n%s", n, out.String())
	}
	if err := run(append([]string{"serverjson", "-version", "1.5.0", "-in", in}, files...), new(bytes.Buffer)); err == nil || !strings.Contains(err.Error(), "not 1.5.0") {
		t.Errorf("bundles of 1.4.0 for release 1.5.0: %v", err)
	}
}

// manifest prints a manifest of the version and platform asked for.
func TestManifestCommand(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"manifest", "-version", "v2.0.0", "-platform", "windows-arm64"}, &out); err != nil {
		t.Fatal(err)
	}
	var m struct {
		Version string
		Server  struct {
			EntryPoint string `json:"entry_point"`
		}
	}
	if err := json.Unmarshal(out.Bytes(), &m); err != nil || m.Version != "2.0.0" || m.Server.EntryPoint != "server/3gs.exe" {
		t.Errorf("%+v %v\n%s", m, err, out.String())
	}
	if err := run([]string{"manifest", "-version", "2.0.0", "-platform", "windows-386"}, new(bytes.Buffer)); err == nil {
		t.Error("a manifest for windows-386 was written")
	}
}
