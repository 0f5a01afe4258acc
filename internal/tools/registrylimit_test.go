package tools

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/hbollon/go-edlib"
	"github.com/three-good-sources/3gs/gen"
)

// A change that would make the registry file larger than
// --max-registry-bytes is refused, since the next start could not load
// the file; and reload_registry reads no more than the limit.
func TestEditsKeepToRegistryLimit(t *testing.T) {
	h, path := editable(t, nil)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h.edit.MaxRegistryBytes = int64(len(before)) + 100 // less than a category
	_, err = h.UpsertCategory(admin, &gen.UpsertCategoryInput{Slug: "sqlite-learning", Category: sqlite("Learning SQLite")})
	var te *gen.ToolError
	if !errors.As(err, &te) || !strings.Contains(te.Text, "--max-registry-bytes") {
		t.Fatalf("upsert past the limit: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Error("the refused change was written")
	}
	h.edit.MaxRegistryBytes = int64(len(before)) - 1
	_, err = h.ReloadRegistry(admin, &gen.ReloadRegistryInput{})
	if !errors.As(err, &te) || !strings.Contains(te.Text, "limit") {
		t.Fatalf("reload of a file over the limit: %v", err)
	}
}

// The bound that spares computing the edit distance to every slug never
// rules out a slug that is within reach: checked against the distance
// itself on slugs and their misspellings.
func TestSlugBoundNeverHidesANearSlug(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-_."
	mutate := func(s string) string {
		b := []byte(s)
		for range 1 + rng.IntN(4) {
			switch i := rng.IntN(len(b) + 1); rng.IntN(4) {
			case 0:
				b = slices.Insert(b, i, alphabet[rng.IntN(len(alphabet))])
			case 1:
				if i < len(b) {
					b = slices.Delete(b, i, i+1)
				}
			case 2:
				if i < len(b) {
					b[i] = alphabet[rng.IntN(len(alphabet))]
				}
			default:
				if i+1 < len(b) {
					b[i], b[i+1] = b[i+1], b[i]
				}
			}
		}
		return string(b)
	}
	checked := 0
	for range 20000 {
		sl := mutate("postgresql-performance")
		sl = sl[:1+rng.IntN(len(sl))]
		typed := mutate(sl)
		most := max(2, len(sl)/4)
		want := letterCounts(typed)
		if d := edlib.OSADamerauLevenshteinDistance(typed, sl); d <= most {
			checked++
			if !mayBeWithin(&want, sl, most) {
				t.Fatalf("%q is %d edits from %q (at most %d allowed) but was ruled out", typed, d, sl, most)
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d pairs within reach; the test checks too little", checked)
	}
}
