package registry

import "testing"

// BumpPatch raises a patch number of any length, never leaving it as it
// was or wrapping it, and drops a pre-release or build suffix.
func TestBumpPatch(t *testing.T) {
	for in, want := range map[string]string{
		"1.4.2":                    "1.4.3",
		"2.0.0-rc.1":               "2.0.1",
		"1.0.9":                    "1.0.10",
		"1.0.0+build.5":            "1.0.1",
		"0.0.9+build.7":            "0.0.10",
		"1.0.99999999999999999999": "1.0.100000000000000000000",
		"1.0.9223372036854775807":  "1.0.9223372036854775808",
		"1.0":                      "1.0",
		"1.0.x":                    "1.0.x",
	} {
		if got := BumpPatch(in); got != want {
			t.Errorf("BumpPatch(%q) = %q, want %q", in, got, want)
		}
	}
}
