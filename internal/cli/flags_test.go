package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Flags may follow the arguments, as in kubectl, gh or hugo: each command
// line here put the flag last and was misread by the standard flag package
// (the query searched for "--registry", the verbs asked for their flag).
func TestFlagsAfterArguments(t *testing.T) {
	dir, keyPath, pub, regPath := curatorSetup(t)
	data, _ := os.ReadFile(regPath)
	mine := filepath.Join(dir, "mine.json")
	if err := os.WriteFile(mine, []byte(strings.Replace(string(data), `"Learning Rust"`, `"Rust From My File"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := run(t, nil, "query", "learn", "rust", "--registry", mine); code != ExitOK || !strings.Contains(out, "Query: learn rust\n") || !strings.Contains(out, "(Rust From My File)") {
		t.Errorf("query with --registry last: exit %d\n%s%s", code, out, errOut)
	}
	// The flag wins over its environment twin wherever it stands.
	env := map[string]string{"REGISTRY_PATH": regPath}
	if code, out, errOut := run(t, env, "query", "learn", "rust", "--registry", mine); code != ExitOK || !strings.Contains(out, "(Rust From My File)") {
		t.Errorf("query with REGISTRY_PATH and --registry last: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run(t, nil, "sign", regPath, "--key-file", keyPath); code != ExitOK || !strings.Contains(out, "wrote "+regPath+".sig") {
		t.Errorf("sign with --key-file last: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run(t, nil, "verify", regPath, "--pubkey", pub); code != ExitOK || !strings.HasPrefix(out, "OK: signed by ") {
		t.Errorf("verify with --pubkey last: exit %d\n%s%s", code, out, errOut)
	}
	tokens := filepath.Join(dir, "tokens.json")
	if code, _, errOut := run(t, nil, "token", "new", "--tier", "user", "--name", "alice", "--tokens", tokens); code != ExitOK {
		t.Fatalf("token new: exit %d\n%s", code, errOut)
	}
	if code, out, errOut := run(t, nil, "token", "revoke", "alice", "--tokens", tokens); code != ExitOK || !strings.Contains(out, `Revoked "alice"`) {
		t.Errorf("token revoke with --tokens last: exit %d\n%s%s", code, out, errOut)
	}
	// After a lone "--" everything is an argument, even what looks like a flag.
	if code, out, errOut := run(t, nil, "query", "--registry", regPath, "--threshold", "0", "--", "--explain", "rust"); code != ExitOK || !strings.Contains(out, "Query: --explain rust\n") || strings.Contains(out, "Scores by field") {
		t.Errorf("query -- --explain: exit %d\n%s%s", code, out, errOut)
	}
}

// `3gs completion SHELL` prints a script that completes 3gs's commands.
func TestCompletion(t *testing.T) {
	for shell, marker := range map[string]string{"bash": "complete -o default", "zsh": "#compdef 3gs", "fish": "complete -c 3gs"} {
		code, out, errOut := run(t, nil, "completion", shell)
		if code != ExitOK || !strings.Contains(out, marker) {
			t.Errorf("completion %s: exit %d, no %q\n%.300s%s", shell, code, marker, out, errOut)
		}
	}
	// The hidden completion request a shell makes lists our commands and a
	// verb group's verbs.
	if code, out, _ := run(t, nil, "__complete", "to"); code != ExitOK || !strings.Contains(out, "token\t") {
		t.Errorf("completing 'to': exit %d\n%s", code, out)
	}
	if code, out, _ := run(t, nil, "__complete", "token", "re"); code != ExitOK || !strings.Contains(out, "revoke\t") {
		t.Errorf("completing 'token re': exit %d\n%s", code, out)
	}
	if code, out, _ := run(t, nil, "__complete", "query", "--reg"); code != ExitOK || !strings.Contains(out, "--registry\t") {
		t.Errorf("completing 'query --reg': exit %d\n%s", code, out)
	}
	if code, out, _ := run(t, nil, "help"); code != ExitOK || !strings.Contains(out, "completion") {
		t.Errorf("help does not list completion: %s", out)
	}
}

// A mistyped command or verb is a usage error that names the likely one.
func TestDidYouMean(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sevre"}, `unknown command "sevre"` + "\nDid you mean serve?"},
		{[]string{"vrify", "registry.json"}, "Did you mean verify?"},
		{[]string{"token", "revok", "alice"}, `3gs token: unknown verb "revok"` + "\nDid you mean revoke?"},
		{[]string{"schema", "dif"}, "Did you mean diff?"},
	} {
		code, out, errOut := run(t, nil, tc.args...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want %q in\n%s%s", tc.args, code, tc.want, out, errOut)
		}
	}
	if code, _, errOut := run(t, nil, "zzzzzz"); code != ExitUsage || strings.Contains(errOut, "Did you mean") {
		t.Errorf("nothing close: exit %d\n%s", code, errOut)
	}
}
