package frozen_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
)

var update = flag.Bool("update", false, "re-sign testdata/*.json with the test key")

// signedAt is the time every frozen signature names, so that signing again
// gives the same bytes.
var signedAt = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func names(t *testing.T) []string {
	files, _ := filepath.Glob("testdata/*.json")
	if len(files) == 0 {
		t.Fatal("no frozen registries in testdata")
	}
	var out []string
	for _, f := range files {
		out = append(out, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	return out
}

// Every frozen registry loads with no warning, names the test key as its
// curator, and carries a signature by it that verifies: the form without
// expiry, made at signedAt (run with -update after editing one).
func TestRegistriesAreSignedByTheTestKey(t *testing.T) {
	test := curatorkey.URI(curatorkey.Public(frozen.TestKey()))
	for _, name := range names(t) {
		data := frozen.Registry(name)
		reg, err := registry.Load(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if w := registry.Warnings(reg); len(w) > 0 {
			t.Errorf("%s: warnings %v", name, w)
		}
		if reg.Curator().Pubkey != test || !strings.Contains(reg.Curator().Name, "TEST KEY") {
			t.Errorf("%s: curator %+v, want the test key, named as such", name, reg.Curator())
		}
		want := signature.SignWith(data, frozen.TestKey(), signedAt, signature.Options{})
		if *update {
			if err := os.WriteFile(filepath.Join("testdata", name+".json.sig"), want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if !bytes.Equal(frozen.Signature(name), want) {
			t.Errorf("%s: the signature is not the test key's over these bytes (run go test ./internal/frozen -update)", name)
		}
		if st := signature.Check(reg, frozen.Signature(name)); !st.Verified {
			t.Errorf("%s: signature does not verify: %v", name, st.Problem)
		}
	}
}

func TestBasicCount(t *testing.T) {
	reg, err := registry.Load(frozen.Registry(frozen.Basic))
	if err != nil || len(reg.Categories()) != frozen.BasicCategories || reg.Version() != "1.1.0" {
		t.Fatalf("basic: %v categories, version %s, %v", len(reg.Categories()), reg.Version(), err)
	}
}

// The binary trusts no curator key of its own, but it embeds a registry
// and its signature: that must not be the test key's, and no package the
// binary links may carry the frozen registries or the key.
func TestBinaryNeverTrustsTheTestKey(t *testing.T) {
	reg, err := registry.Load(threegs.DefaultRegistry)
	if err != nil {
		t.Fatal(err)
	}
	if key, _ := reg.CuratorKey(); key.Equal(curatorkey.Public(frozen.TestKey())) {
		t.Fatal("the embedded registry names the test key as its curator")
	}
	if bytes.Contains(threegs.DefaultSignature, []byte(curatorkey.Encode(curatorkey.Public(frozen.TestKey())))) {
		t.Fatal("the embedded signature is the test key's")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/three-good-sources/3gs/cmd/3gs").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasSuffix(pkg, "/internal/frozen") || strings.HasSuffix(pkg, "/internal/testserver") {
			t.Errorf("the binary links %s", pkg)
		}
	}
}

// Tests call every tool's example calls on Basic (the tier matrix, the
// output schemas), so it must hold each slug they name, except where the
// call brings the category itself (an upsert, a proposal to add one): a
// new example naming another slug adds that category here rather than
// failing a test about tiers.
func TestBasicHoldsTheExampleSlugs(t *testing.T) {
	reg, err := registry.Load(frozen.Registry(frozen.Basic))
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range gen.Tools {
		for _, args := range tool.Examples.Arguments {
			var call struct {
				Slug     string
				Category json.RawMessage
			}
			if err := json.Unmarshal([]byte(args), &call); err != nil {
				t.Fatalf("%s: %s: %v", tool.Name, args, err)
			}
			if _, ok := reg.Category(call.Slug); call.Slug != "" && !ok && call.Category == nil {
				t.Errorf("%s's example %s names %s, which frozen.Basic lacks", tool.Name, args, call.Slug)
			}
		}
	}
}
