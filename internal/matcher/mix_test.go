package matcher_test

import (
	"testing"

	"github.com/three-good-sources/3gs/internal/evalset"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/tools"
)

// TestMixV1 checks what the benchmark mix promises: every question reads,
// its expected slugs are categories of its registry, it has each kind of
// hard question, and at least a third of it is no confident answer at the
// default threshold (a mix of easy questions would flatter the fast path).
func TestMixV1(t *testing.T) {
	set := evalset.MixV1("../..")
	reg, err := registry.LoadFile(set.Registry)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := evalset.Read(set.Queries)
	if err != nil {
		t.Fatal(err)
	}
	slugs := map[string]bool{}
	for _, c := range reg.Categories() {
		slugs[c.Slug] = true
	}
	shapes := map[string]int{}
	m := matcher.New(reg)
	notConfident := 0
	for _, c := range cases {
		shapes[c.Shape]++
		if c.OnTopic() && !slugs[c.Want] {
			t.Errorf("line %d: %q is not a category of %s", c.Line, c.Want, set.Registry)
		}
		got, err := m.Match(c.Query, 5)
		if err != nil || len(got) == 0 || got[0].Score < tools.DefaultThreshold {
			notConfident++
		}
	}
	for _, shape := range []string{"typo", "long", "offtopic", "nonsense"} {
		if shapes[shape] == 0 {
			t.Errorf("the mix has no %s question", shape)
		}
	}
	if 3*notConfident < len(cases) {
		t.Errorf("%d of %d questions are not confident, want at least a third", notConfident, len(cases))
	}
	t.Logf("%d questions, %d not confident, shapes %v", len(cases), notConfident, shapes)
}
