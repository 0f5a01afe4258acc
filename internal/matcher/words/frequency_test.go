package words

import "testing"

// TestFrequencyWord: FrequencyWord reads word i of the list in place, the
// same word ByFrequency copies out, and allocates nothing.
func TestFrequencyWord(t *testing.T) {
	list := ByFrequency()
	if len(list) == 0 {
		t.Fatal("no words")
	}
	for i, w := range list {
		if got := FrequencyWord(i); got != w {
			t.Fatalf("FrequencyWord(%d) = %q, want %q", i, got, w)
		}
	}
	if n := testing.AllocsPerRun(100, func() { FrequencyWord(len(list) / 2) }); n != 0 {
		t.Errorf("FrequencyWord allocates %v times", n)
	}
}
