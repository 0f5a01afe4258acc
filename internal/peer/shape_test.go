package peer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/internal/fetch"
	"github.com/three-good-sources/3gs/internal/registry"
)

// manyCategories is a valid registry of n categories by curatorURI,
// indented with indent (compact when "").
func manyCategories(t *testing.T, curatorURI string, n int, indent string) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(registryDoc(curatorURI, "2.0.0", ""), &doc); err != nil {
		t.Fatal(err)
	}
	cats := doc["categories"].(map[string]any)
	one := cats["git-version-control"]
	for i := range n - 1 {
		cats[fmt.Sprintf("topic-%d", i)] = one
	}
	var out []byte
	var err error
	if indent == "" {
		out, err = json.Marshal(doc)
	} else {
		out, err = json.MarshalIndent(doc, "", indent)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestShapeCounts(t *testing.T) {
	data := manyCategories(t, "pk:x", 7, "  ")
	ws, cats := shape(data)
	if cats != 7 {
		t.Errorf("%d categories counted, want 7", cats)
	}
	// Strings hide what looks like structure.
	ws, cats = shape([]byte(`{"a": "{\"categories\": {\"x\": 1}}", "categories": {"b\"c": {"d": [1, {"e": 2}]}, "f": 3}, "g": {"h": 1}}`))
	if cats != 2 {
		t.Errorf("%d categories counted in the tricky document, want 2", cats)
	}
	if ws != 12 {
		t.Errorf("%d whitespace bytes, want 12", ws)
	}
	// The shipped registry passes, compact or indented.
	if err := checkShape(threegs.DefaultRegistry); err != nil {
		t.Errorf("the default registry: %v", err)
	}
	for _, indent := range []string{"", "  ", "    ", "\t"} {
		if err := checkShape(manyCategories(t, "pk:x", 400, indent)); err != nil {
			t.Errorf("400 categories indented %q: %v", indent, err)
		}
	}
}

// A validly signed registry that is mostly whitespace, or far larger than
// its categories need, is refused as too large before it is decoded.
func TestRefusedByShape(t *testing.T) {
	c := newCurator(t)
	padded := registryDoc(c.uri, "2.0.0", "")
	padded = append(padded[:len(padded)-2], append(bytes.Repeat([]byte(" \n\t"), 300_000), '}', '\n')...)
	// One category and 100 endorsements whose URLs are escaped letter by
	// letter: valid, hardly any whitespace, and 1.2 MB for one category.
	var ends []string
	for range 100 {
		e := newCurator(t)
		ends = append(ends, fmt.Sprintf(`{"pubkey": %q, "url": "https://e.example/%s", "since": "2026-11-01"}`, e.uri, strings.Repeat(`\u0061`, 2000)))
	}
	bloated := bytes.Replace(registryDoc(c.uri, "2.0.0", ""), []byte(`"endorsements": []`), []byte(`"endorsements": [`+strings.Join(ends, ",")+`]`), 1)
	if _, err := registry.Load(bytes.Clone(bloated)); err != nil {
		t.Fatalf("the bloated registry is not otherwise valid: %v", err)
	}
	for name, data := range map[string][]byte{"whitespace between tokens": padded, "bytes for 1 categories": bloated} {
		_, err := Accept(pkarrKey(t, c.uri), data, c.sign(data), &AcceptOptions{Now: signedAt})
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if PublicReason(err) != fetch.RefusedTooLarge || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %q (%s)", name, err, PublicReason(err))
		}
	}
}
