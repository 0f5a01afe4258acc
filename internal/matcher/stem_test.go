package matcher

import "testing"

func TestStem(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"containers", "container"},
		{"Hardening", "harden"},
		{"databases", "database"},
		{"esp32", "esp32"},
	} {
		if Stem(tc.a) != Stem(tc.b) {
			t.Errorf("Stem(%q) = %q, Stem(%q) = %q: want the same", tc.a, Stem(tc.a), tc.b, Stem(tc.b))
		}
	}
	if Stem("docker") == Stem("database") {
		t.Error("different words share a stem")
	}
}
