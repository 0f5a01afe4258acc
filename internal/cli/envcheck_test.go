package cli

import (
	"strings"
	"testing"
)

// A misspelt THREEGS_ variable was ignored without a word, and doctor
// said every variable was valid: serve now warns in its log and doctor
// flags it, each naming the known variable nearest to it. Variables 3gs
// reads, and other programs' variables, are not named.
func TestUnknownEnvIsNamed(t *testing.T) {
	environ := map[string]string{"THREEGS_LOG_LEVLE": "debug", "THREEGS_CHECK_SOURCES": "24h", "THREEGS_TOKEN": "", "HOME": "/nowhere", "REGISTRY_PATH": ""}
	const want = "THREEGS_LOG_LEVLE is set, but no 3gs command reads it: did you mean THREEGS_LOG_LEVEL?"
	code, _, errOut := serveLines(t, environ, nil)
	if code != ExitOK || !strings.Contains(errOut, want) {
		t.Errorf("serve: exit %d, log lacks %q:\n%s", code, want, errOut)
	}
	for _, known := range []string{"THREEGS_CHECK_SOURCES is set", "THREEGS_TOKEN is set", "HOME", "REGISTRY_PATH is set"} {
		if strings.Contains(errOut, known) {
			t.Errorf("serve names %s:\n%s", known, errOut)
		}
	}
	_, out, errOut := run(t, environ, "doctor")
	if !strings.Contains(out, "WARN  environment: THREEGS_LOG_LEVLE is set, but no 3gs command reads it; the nearest one that is read is THREEGS_LOG_LEVEL. Fix: rename it THREEGS_LOG_LEVEL") {
		t.Errorf("doctor lacks the warning:\n%s%s", out, errOut)
	}
	if strings.Count(out, "environment:") != 1 {
		t.Errorf("doctor names more than the one unknown variable:\n%s", out)
	}
	// Every flag's twin is known, so a clean environment has nothing to say.
	if _, out, _ := run(t, map[string]string{"THREEGS_EXPLAIN": "1"}, "doctor"); strings.Contains(out, "environment:") {
		t.Errorf("doctor flags a known variable:\n%s", out)
	}
}
