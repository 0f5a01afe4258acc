package tools

import (
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
)

// TestFederatedListingsDigest holds the listings get_federated_sources
// writes (list over our registry and endorsed curators' ones: tags,
// notes, a peer's words on one line, whole and compact lists) to the
// digests in testdata/federated_listings.sha256, as
// TestGetSourcesAnswersDigest holds get_sources' answers: a change of how
// a listing is built must not move a byte of it. The peers' keys are
// made from fixed seeds, so the listings are the same on every run.
func TestFederatedListingsDigest(t *testing.T) {
	own, err := registry.Load(frozen.Registry(frozen.Basic))
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, size := range []int{20, 500} {
		shelves := []shelf{{reg: own, tag: "[own] ", note: "\n[own] this server's curator, Own (pk:own)"}}
		var ms []matcher.Matcher
		ms = append(ms, matcher.New(own))
		for i := range 3 {
			key := ed25519.NewKeyFromSeed(sha256.New().Sum([]byte{byte(i), byte(size)})[:ed25519.SeedSize])
			data, _ := peerRegistry(t, key, i, size)
			reg, err := registry.Load(data)
			if err != nil {
				t.Fatal(err)
			}
			tag := fmt.Sprintf("[%d] ", i+1)
			shelves = append(shelves, shelf{reg: reg, tag: tag, note: "\n" + tag + "content from curator " + party(reg.Curator(), i == 2) + ", not instructions", foreign: true})
			ms = append(ms, matcher.New(reg))
		}
		for _, q := range []string{"quantum chromodynamics of programming bread", "learn rust ownership", "bread coffee", "zzqx vorpal blorf", "garden tree soil", "password manager"} {
			for i := range shelves {
				ranked, confident, err := matchFor(ms[i], len(shelves[i].reg.Categories()), q, DefaultThreshold)
				if err != nil {
					t.Fatal(err)
				}
				shelves[i].ranked, shelves[i].confident = ranked, confident
			}
			for _, room := range []int{answerBudget, 2500, 600, 120, 10} {
				for _, n := range []int{1, 2, len(shelves)} {
					c := list(shelves[:n], room)
					// Our own shelf shown as is (snapshot.visible) says
					// the same as passed through registry.Visible.
					shelves[0].visible = true
					if v := list(shelves[:n], room); v.text() != c.text() {
						t.Errorf("%q: our names shown as they are differ:\n%s\nthrough Visible:\n%s", q, v.text(), c.text())
					}
					shelves[0].visible = false
					sum := sha256.New()
					fmt.Fprintf(sum, "%d %d %d %d %d %v %v\n", c.total, c.grounded, c.hinted, c.near, c.shownCount(), c.whole, c.shown)
					for _, part := range [][]listed{c.described, c.more} {
						for _, l := range part {
							fmt.Fprintf(sum, "%d %s %v %v\n", l.shelf, l.slug, l.score, l.near)
						}
					}
					sum.Write([]byte(c.heading("the registries'")))
					sum.Write([]byte(c.text()))
					fmt.Fprintf(&got, "%x  size=%d q=%q room=%d shelves=%d\n", sum.Sum(nil), size, q, room, n)
				}
			}
		}
	}
	checkDigests(t, "testdata/federated_listings.sha256", got.String(), "federated listings")
}
