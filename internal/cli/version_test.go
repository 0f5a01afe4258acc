package cli

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionOf(t *testing.T) {
	for _, c := range []struct {
		main     string
		settings map[string]string
		version  string
		commit   string
	}{
		{"v1.2.0", nil, "v1.2.0", "unknown"},
		{"v0.0.0-20261121120000-0123456789ab", nil, "v0.0.0-20261121120000-0123456789ab", "0123456789ab"},
		{"v1.2.1-0.20261121120000-abcdefabcdef", nil, "v1.2.1-0.20261121120000-abcdefabcdef", "abcdefabcdef"},
		{"(devel)", map[string]string{"vcs.revision": "f00dfeed", "vcs.modified": "false"}, "(devel)", "f00dfeed"},
		{"", map[string]string{"vcs.revision": "f00dfeed", "vcs.modified": "true"}, "(devel)", "f00dfeed, with uncommitted changes"},
	} {
		bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: c.main}}
		for k, v := range c.settings {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: k, Value: v})
		}
		v, commit, goV := versionOf(bi)
		if v != c.version || commit != c.commit || goV != "go1.26.0" {
			t.Errorf("%q %v: %q %q %q", c.main, c.settings, v, commit, goV)
		}
	}
	code, out, _ := run(t, nil, "--version")
	if code != ExitOK || !strings.HasPrefix(out, "3gs ") || !strings.Contains(out, "go1.") {
		t.Errorf("--version: %d %q", code, out)
	}
}
