package cli

import (
	"strings"
	"testing"
)

// Every command and verb has help that names each of its flags with the
// environment variable that sets it and its default; bad flags and unknown
// commands get a short usage and exit 2.
func TestHelp(t *testing.T) {
	var all [][]string
	for _, c := range commands() {
		all = append(all, []string{c.name})
		for _, v := range verbGroups()[c.name] {
			all = append(all, []string{c.name, v.name})
		}
	}
	for _, words := range all {
		code, out, errOut := run(t, nil, append([]string{"help"}, words...)...)
		if code != ExitOK || !strings.HasPrefix(out, "Usage: 3gs "+strings.Join(words, " ")) {
			t.Errorf("help %v: exit %d\n%s%s", words, code, out, errOut)
			continue
		}
		c, _ := find(words)
		if _, group := verbGroups()[words[0]]; group && len(words) == 1 {
			continue // the verbs' help names their flags
		}
		f := newFlags(c, &Env{Getenv: func(string) string { return "" }})
		for name, twin := range f.twins {
			def := f.defs[name]
			if def == "" {
				def = "none"
			}
			if want := "--" + name + " (env " + twin + "; default " + def + ")"; !strings.Contains(out, want) {
				t.Errorf("help %v lacks %q", words, want)
			}
		}
	}
	code, out, errOut := run(t, nil, "serve", "--no-such-flag")
	if code != ExitUsage || out != "" || strings.Count(errOut, "\n") > 3 || !strings.Contains(errOut, "unknown flag: --no-such-flag") || !strings.Contains(errOut, "3gs help serve") {
		t.Errorf("a bad flag: exit %d\n%s", code, errOut)
	}
	// A mistyped flag gets the flags it is close to, as a command does.
	for _, c := range [][]string{{"sign", "--keyfile", "K"}, {"serve", "--registy", "R"}, {"token", "new", "--tokns=T"}} {
		want := map[string]string{"sign": "--key-file", "serve": "--registry", "token": "--tokens"}[c[0]]
		if code, _, errOut := run(t, nil, c...); code != ExitUsage || !strings.Contains(errOut, "Did you mean "+want+"?") {
			t.Errorf("%v: exit %d\n%s", c, code, errOut)
		}
	}
	if code, _, errOut := run(t, nil, "token", "new", "--no-such-flag"); code != ExitUsage || !strings.Contains(errOut, "3gs help token new") {
		t.Errorf("a bad verb flag: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := run(t, nil, "no-such-command"); code != ExitUsage || !strings.Contains(errOut, `unknown command "no-such-command"`) {
		t.Errorf("an unknown command: exit %d\n%s", code, errOut)
	}
	if code, out, errOut := run(t, nil, "serve", "--help"); code != ExitOK || !strings.Contains(out, "--registry (env REGISTRY_PATH; default none)") {
		t.Errorf("serve --help: exit %d\n%s%s", code, out, errOut)
	}
}

// `3gs help all` is what the README promises of help: every command and
// verb, each flag with its environment variable and default; and the
// command list says where it is. Before, help listed commands only and
// `help all` was "no command".
func TestHelpAll(t *testing.T) {
	code, out, errOut := run(t, nil, "help", "all")
	if code != ExitOK {
		t.Fatalf("help all: exit %d\n%s", code, errOut)
	}
	for _, c := range commands() {
		words := [][]string{{c.name}}
		if verbs, group := verbGroups()[c.name]; group {
			words = nil
			for _, v := range verbs {
				words = append(words, []string{c.name, v.name})
			}
		}
		for _, w := range words {
			name := strings.Join(w, " ")
			if c.name != "help" && !strings.Contains(out, "Usage: 3gs "+name+" ") {
				t.Errorf("help all has no usage of %s", name)
			}
			cmd, _ := find(w)
			f := newFlags(cmd, &Env{Getenv: func(string) string { return "" }})
			for flag, twin := range f.twins {
				def := f.defs[flag]
				if def == "" {
					def = "none"
				}
				if want := "--" + flag + " (env " + twin + "; default " + def + ")"; !strings.Contains(out, want) {
					t.Errorf("help all lacks %s's %q", name, want)
				}
			}
		}
	}
	if !strings.Contains(out, "Flags: those of 3gs serve, above.") {
		t.Error("help all lists doctor's flags, serve's, twice")
	}
	if _, list, _ := run(t, nil, "help"); !strings.Contains(list, "'3gs help all'") {
		t.Errorf("the command list does not say where every flag is:\n%s", list)
	}
}
