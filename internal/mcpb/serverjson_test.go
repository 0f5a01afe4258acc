package mcpb

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/three-good-sources/3gs/internal/testkit"
)

func committedServerJSON(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testkit.Root(), "server.json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// fakeRelease has a distinct made-up digest for every platform.
func fakeRelease(version string) Release {
	r := Release{Version: version, Bundles: map[Platform]string{}}
	for _, p := range Platforms {
		sum := sha256.Sum256([]byte(p.String()))
		r.Bundles[p] = hex.EncodeToString(sum[:])
	}
	return r
}

func validate(t *testing.T, s *jsonschema.Schema, data []byte) error {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(doc)
}

// A release's server.json passes the registry's schema and its rules
// beyond the schema, names the release everywhere, carries each bundle's
// digest, and keeps everything else the committed file says.
func TestStampServerJSON(t *testing.T) {
	committed := committedServerJSON(t)
	r := fakeRelease("2.3.4")
	r.ImageDigest = "sha256:" + strings.Repeat("ab", 32)
	stamped, err := StampServerJSON(committed, r)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(t, testkit.ServerSchema(t), stamped); err != nil {
		t.Fatalf("the stamped server.json breaks the registry's schema: %v\n%s", err, stamped)
	}
	if p := RegistryProblems(stamped); len(p) > 0 {
		t.Fatalf("the registry would refuse the stamped server.json: %v", p)
	}
	if strings.Contains(string(stamped), Placeholder) || strings.Contains(string(stamped), "0.1.0") {
		t.Errorf("the committed version or a placeholder digest is left:\n%s", stamped)
	}

	var before, after map[string]any
	json.Unmarshal(committed, &before)
	json.Unmarshal(stamped, &after)
	if after["version"] != "2.3.4" {
		t.Errorf("version %v", after["version"])
	}
	seen := map[Platform]bool{}
	for _, p := range after["packages"].([]any) {
		p := p.(map[string]any)
		switch p["registryType"] {
		case "oci":
			if want := "ghcr.io/three-good-sources/3gs:2.3.4@" + r.ImageDigest; p["identifier"] != want {
				t.Errorf("image %v, want %s", p["identifier"], want)
			}
		case "mcpb":
			id := p["identifier"].(string)
			_, plat, err := ParseBundleName(filepath.Base(id))
			if err != nil {
				t.Fatal(err)
			}
			seen[plat] = true
			if id != ReleaseURL("2.3.4", plat) || p["fileSha256"] != r.Bundles[plat] || p["version"] != "2.3.4" {
				t.Errorf("%s: %v", plat, p)
			}
		}
	}
	if len(seen) != len(Platforms) {
		t.Errorf("bundles stamped: %v", seen)
	}
	// Nothing else moved: with the stamped members put back, the two are
	// the same document.
	after["version"] = before["version"]
	after["packages"] = before["packages"]
	a, _ := json.Marshal(after)
	b, _ := json.Marshal(before)
	if string(a) != string(b) {
		t.Errorf("stamping changed more than the release's members:\n%s\n%s", a, b)
	}

	// Without a digest, the tag alone names the image.
	plain, err := StampServerJSON(committed, fakeRelease("2.3.4"))
	if err != nil || !strings.Contains(string(plain), `"ghcr.io/three-good-sources/3gs:2.3.4"`) {
		t.Errorf("%v\n%s", err, plain)
	}
}

// A release that does not match server.json is refused, and so is a
// server.json member the stamping code would drop.
func TestStampServerJSONRefuses(t *testing.T) {
	committed := committedServerJSON(t)
	missing := fakeRelease("1.0.0")
	delete(missing.Bundles, Platform{"windows", "arm64"})
	placeholder := fakeRelease("1.0.0")
	placeholder.Bundles[Platform{"linux", "amd64"}] = Placeholder
	extra := strings.Replace(string(committed), `"mcpb",`, `"mcpb", "runtimeHint": "x", "novel": 1,`, 1)
	for name, c := range map[string]struct {
		doc []byte
		r   Release
	}{
		"a bundle missing":         {committed, missing},
		"a placeholder digest":     {committed, placeholder},
		"a version that is no tag": {committed, fakeRelease("(devel)")},
		"an unknown member":        {[]byte(extra), fakeRelease("1.0.0")},
		"a bad image digest":       {committed, Release{Version: "1.0.0", Bundles: fakeRelease("1.0.0").Bundles, ImageDigest: "latest"}},
	} {
		if out, err := StampServerJSON(c.doc, c.r); err == nil {
			t.Errorf("%s: stamped\n%s", name, out)
		}
	}
	// A bundle built for a platform server.json does not list.
	fewer := strings.Replace(string(committed), "3gs-0.1.0-windows-arm64.mcpb", "3gs-0.1.0-windows-amd64.mcpb", 1)
	if _, err := StampServerJSON([]byte(fewer), fakeRelease("1.0.0")); err == nil {
		t.Error("a bundle server.json does not list was accepted")
	}
}

// Each rule RegistryProblems applies catches what it is for: one change
// at a time to a server.json the registry would accept.
func TestRegistryProblems(t *testing.T) {
	good, err := StampServerJSON(committedServerJSON(t), fakeRelease("1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if p := RegistryProblems(good); len(p) > 0 {
		t.Fatal(p)
	}
	bundle := `"identifier": "` + ReleaseURL("1.0.0", Platform{"linux", "amd64"}) + `"`
	for _, c := range []struct{ why, old, new string }{
		{"a name without a namespace", `"name": "io.github.three-good-sources/3gs"`, `"name": "3gs"`},
		{"version latest", `"version": "1.0.0",
  "websiteUrl"`, `"version": "latest",
  "websiteUrl"`},
		{"a version range", `"version": "1.0.0",
  "websiteUrl"`, `"version": "^1.0.0",
  "websiteUrl"`},
		{"the go type", `"registryType": "oci"`, `"registryType": "go"`},
		{"an oci version", `"registryType": "oci",`, `"registryType": "oci", "version": "1.0.0",`},
		{"an oci digest", `"registryType": "oci",`, `"registryType": "oci", "fileSha256": "` + Placeholder + `",`},
		{"an oci base URL", `"registryType": "oci",`, `"registryType": "oci", "registryBaseUrl": "https://ghcr.io",`},
		{"an image without its registry", `"ghcr.io/three-good-sources/3gs:1.0.0"`, `"three-good-sources/3gs:1.0.0"`},
		{"an image without a tag", `"ghcr.io/three-good-sources/3gs:1.0.0"`, `"ghcr.io/three-good-sources/3gs"`},
		{"an image elsewhere", `"ghcr.io/three-good-sources/3gs:1.0.0"`, `"registry.example.com/3gs:1.0.0"`},
		{"a bundle without a digest", `"fileSha256": "` + fakeRelease("1.0.0").Bundles[Platform{"darwin", "amd64"}] + `",`, ``},
		{"a bundle elsewhere", bundle, `"identifier": "https://example.com/3gs-1.0.0-linux-amd64.mcpb"`},
		{"a bundle over http", bundle, `"identifier": "http://github.com/three-good-sources/3gs/releases/download/v1.0.0/3gs-1.0.0-linux-amd64.mcpb"`},
		{"a bundle not a release asset", bundle, `"identifier": "https://github.com/three-good-sources/3gs/raw/main/3gs.mcpb"`},
		{"a stdio URL", `"transport": {
        "type": "stdio"
      }`, `"transport": {
        "type": "stdio", "url": "http://localhost/mcp"
      }`},
		{"a remote on localhost", `"url": "https://{host}/mcp"`, `"url": "https://localhost/mcp"`},
		{"a remote over http", `"url": "https://{host}/mcp"`, `"url": "http://{host}/mcp"`},
		{"an undefined variable", `"url": "https://{host}/mcp"`, `"url": "https://{hostname}/mcp"`},
		{"a named argument with its value", `"type": "positional",
          "value": "serve"`, `"type": "named", "name": "--http 8080",
          "value": "serve"`},
		{"a positional argument without a value", `"type": "positional",
          "value": "serve",`, `"type": "positional",`},
	} {
		if !strings.Contains(string(good), c.old) {
			t.Fatalf("%s: the stamped server.json lacks %s", c.why, c.old)
		}
		bad := strings.Replace(string(good), c.old, c.new, 1)
		if p := RegistryProblems([]byte(bad)); len(p) == 0 {
			t.Errorf("%s: no problem found", c.why)
		} else {
			t.Logf("%s: %v", c.why, p)
		}
	}
}

// The committed server.json is in the form SetVersion writes, so moving it
// to the next version (mcpbgen setversion) changes only what must change,
// and moving it back restores it byte for byte.
func TestSetVersion(t *testing.T) {
	committed := committedServerJSON(t)
	var sj struct{ Version string }
	if err := json.Unmarshal(committed, &sj); err != nil {
		t.Fatal(err)
	}
	same, err := SetVersion(committed, sj.Version)
	if err != nil {
		t.Fatal(err)
	}
	if string(same) != string(committed) {
		t.Fatalf("server.json is not in the form mcpbgen writes; run: go run ./internal/mcpb/cmd/mcpbgen setversion -version %s\n%s", sj.Version, same)
	}
	next, err := SetVersion(committed, "9.8.7")
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(t, testkit.ServerSchema(t), next); err != nil {
		t.Error(err)
	}
	if strings.Contains(string(next), `"`+sj.Version+`"`) || strings.Count(string(next), Placeholder) != len(Platforms) {
		t.Errorf("moved to 9.8.7:\n%s", next)
	}
	back, err := SetVersion(next, sj.Version)
	if err != nil || string(back) != string(committed) {
		t.Errorf("moving back did not restore the file: %v", err)
	}
}
