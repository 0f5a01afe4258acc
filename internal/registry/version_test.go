package registry

import "testing"

func TestCompareVersions(t *testing.T) {
	// Each is lower than the next (semver.org's own example order, and
	// numbers compared as numbers).
	order := []string{"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.9", "1.0.10", "1.2.0", "1.10.0", "2.0.0", "10.0.0", "99999999999999999999.0.0"}
	for i := range order {
		for j := range order {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := CompareVersions(order[i], order[j]); got != want {
				t.Errorf("CompareVersions(%s, %s) = %d, want %d", order[i], order[j], got, want)
			}
		}
	}
	if CompareVersions("1.2.3+build.1", "1.2.3+build.2") != 0 {
		t.Error("build metadata must not order versions")
	}
}
