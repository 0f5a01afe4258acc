package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/app"
	"github.com/three-good-sources/3gs/internal/registry"
)

// runIn is run with stdin.
func runIn(t *testing.T, environ map[string]string, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return environ[k] }}
	code = Run(context.Background(), args, env)
	return code, out.String(), errOut.String()
}

// newCategory is a valid category for slug, made from the registry's
// first one under another name, as JSON.
func newCategory(t *testing.T, regPath, name string) []byte {
	t.Helper()
	reg, err := registry.LoadFile(regPath)
	if err != nil {
		t.Fatal(err)
	}
	c := *reg.Categories()[0].Category
	c.Name, c.Description = name, "Everything about "+name+", from the first steps to the details."
	return categoryJSON("x", c)
}

// lastEntry is the audit log's last entry beside regPath.
func lastEntry(t *testing.T, regPath string) *gen.AuditEntry {
	t.Helper()
	es := auditEntries(t, regPath)
	return es[len(es)-1]
}

func detailOf(e *gen.AuditEntry) string {
	if e.Detail == nil {
		return ""
	}
	return *e.Detail
}

// 3gs category add|edit|remove: one category from a file, stdin or the
// editor, checked strictly, written, recorded with what it was and
// signed. Before: no such command; a category was changed by editing
// registry.json by hand and signing, which the audit log records as a
// sign, saying nothing of what changed.
func TestCategoryAddEditRemove(t *testing.T) {
	dir, keyPath, _, regPath := curatorSetup(t)
	if code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitOK {
		t.Fatalf("sign: %s", errOut)
	}
	file := filepath.Join(dir, "cat.json")
	os.WriteFile(file, newCategory(t, regPath, "Zig"), 0o644)
	code, out, errOut := run(t, nil, "category", "add", "zig-learning", "--registry", regPath, "--key-file", keyPath, "--file", file)
	if code != ExitOK || !strings.Contains(out, "Added category zig-learning") {
		t.Fatalf("add: exit %d\n%s%s", code, out, errOut)
	}
	if e := lastEntry(t, regPath); e.Action != gen.AuditActionUpsert || *e.Slug != "zig-learning" || e.Actor != app.LocalActor() || detailOf(e) != "add category zig-learning" || e.Signature == nil {
		t.Errorf("add's audit entry: %+v", e)
	}
	if code, _, errOut := run(t, nil, "category", "add", "zig-learning", "--registry", regPath, "--key-file", keyPath, "--file", file); code != ExitFail || !strings.Contains(errOut, "3gs category edit zig-learning") {
		t.Errorf("adding it again: exit %d %s", code, errOut)
	}

	// From stdin, replacing it.
	code, out, errOut = runIn(t, nil, string(newCategory(t, regPath, "Zig, again")), "category", "edit", "zig-learning", "--registry", regPath, "--key-file", keyPath)
	if code != ExitOK || !strings.Contains(out, "Replaced category zig-learning") {
		t.Fatalf("edit from stdin: exit %d\n%s%s", code, out, errOut)
	}
	if e := lastEntry(t, regPath); detailOf(e) != "replace category zig-learning" {
		t.Errorf("edit's audit entry: %+v", e)
	}

	// In the editor: a script standing for one changes the name.
	editor := filepath.Join(dir, "editor.sh")
	os.WriteFile(editor, []byte("#!/bin/sh\nsed -i 's/\"Zig, again\"/\"Zig in the editor\"/' \"$1\"\n"), 0o755)
	code, out, errOut = run(t, map[string]string{"EDITOR": editor}, "category", "edit", "zig-learning", "--registry", regPath, "--key-file", keyPath, "--editor")
	if code != ExitOK || !strings.Contains(out, "Replaced category zig-learning") {
		t.Fatalf("edit in the editor: exit %d\n%s%s", code, out, errOut)
	}
	if reg, _ := registry.LoadFile(regPath); reg == nil {
		t.Fatal("the registry no longer loads")
	} else if c, ok := reg.Category("zig-learning"); !ok || c.Name != "Zig in the editor" {
		t.Errorf("after the editor: %+v", c)
	}
	// An editor that changes nothing writes nothing.
	before, _ := os.ReadFile(regPath)
	code, out, _ = run(t, map[string]string{"EDITOR": "true"}, "category", "edit", "zig-learning", "--registry", regPath, "--key-file", keyPath, "--editor")
	if after, _ := os.ReadFile(regPath); code != ExitOK || !strings.Contains(out, "unchanged") || !bytes.Equal(before, after) {
		t.Errorf("an unchanged edit: exit %d %s", code, out)
	}

	// Problems are named by path, with the fix.
	for _, c := range []struct{ in, want string }{
		{`{"name": "Zig"}`, "description"},
		{`{"name": "Zig", `, "not valid JSON"},
		{strings.Replace(string(newCategory(t, regPath, "Zig")), `"name"`, `"nmae"`, 1), "nmae"},
	} {
		code, _, errOut := runIn(t, nil, c.in, "category", "add", "zig-two", "--registry", regPath, "--key-file", keyPath)
		if code != ExitFail || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "Fix") {
			t.Errorf("add %s: exit %d %s", c.in, code, errOut)
		}
	}
	if after, _ := os.ReadFile(regPath); !bytes.Equal(before, after) {
		t.Error("a refused category changed the file")
	}
	if code, _, errOut := run(t, nil, "category", "edit", "no-such", "--registry", regPath, "--file", file); code != ExitFail || !strings.Contains(errOut, "3gs category add no-such") {
		t.Errorf("editing a missing category: exit %d %s", code, errOut)
	}
	if code, _, errOut := run(t, nil, "category", "add", "Bad Slug", "--registry", regPath); code != ExitUsage || !strings.Contains(errOut, "slug") {
		t.Errorf("a bad slug: exit %d %s", code, errOut)
	}

	code, out, errOut = run(t, nil, "category", "remove", "zig-learning", "--registry", regPath, "--key-file", keyPath)
	if code != ExitOK || !strings.Contains(out, "Removed category zig-learning") {
		t.Fatalf("remove: exit %d\n%s%s", code, out, errOut)
	}
	if e := lastEntry(t, regPath); e.Action != gen.AuditActionRemove || *e.Slug != "zig-learning" || e.Actor != app.LocalActor() {
		t.Errorf("remove's audit entry: %+v", e)
	}
	if code, _, errOut := run(t, nil, "category", "remove", "zig-learning", "--registry", regPath, "--key-file", keyPath); code != ExitFail || !strings.Contains(errOut, "no category has this slug") {
		t.Errorf("removing it again: exit %d %s", code, errOut)
	}
	if code, out, errOut := run(t, nil, "verify", regPath); code != ExitOK || !strings.HasPrefix(out, "OK") {
		t.Errorf("verify: %s%s", out, errOut)
	}
	if code, _, errOut := run(t, nil, "audit", "verify", regPath); code != ExitOK {
		t.Errorf("audit verify: %s", errOut)
	}
}

// The same acts, with a server holding the registry and without, leave
// the same audit entries: the same action, category, actor, detail and
// version, signed.
func TestCuratorActsSameEntryEitherPath(t *testing.T) {
	const other = "pk:6kozs5ey44jcees417bpf99rchoutjdz8x175zh8jeqw5fr4eaoo"
	type entry struct {
		Action, Slug, Actor, Detail, Version string
		Signed                               bool
	}
	acts := func(t *testing.T, serve bool) []entry {
		dir, keyPath, _, regPath := curatorSetup(t)
		if code, _, errOut := run(t, nil, "sign", "--key-file", keyPath, regPath); code != ExitOK {
			t.Fatalf("sign: %s", errOut)
		}
		reg, _ := registry.LoadFile(regPath)
		slug := reg.Categories()[1].Slug
		id := proposed(t, regPath, gen.ProposalRecord{Action: gen.ProposalActionRemoveCategory, Slug: slug, Reason: "duplicate"})
		file := filepath.Join(dir, "cat.json")
		os.WriteFile(file, newCategory(t, regPath, "Zig"), 0o644)
		n := len(auditEntries(t, regPath))
		if serve {
			serveInProcess(t, regPath, keyPath)
		}
		for _, args := range [][]string{
			{"endorse", regPath, "--pubkey", other, "--url", "https://coffee.example", "--since", "2026-12-01"},
			{"category", "add", "zig-learning", "--registry", regPath, "--file", file},
			{"category", "edit", "zig-learning", "--registry", regPath, "--file", file, "--editor=false"},
			{"proposals", "accept", id, "--registry", regPath, "--reason", "it is"},
			{"category", "remove", "zig-learning", "--registry", regPath},
		} {
			args = append(args, "--key-file", keyPath)
			code, out, errOut := run(t, nil, args...)
			if args[1] == "edit" {
				// The same category again: unchanged, nothing written.
				if code != ExitOK || !strings.Contains(out, "unchanged") {
					t.Errorf("serve %v: %v: exit %d\n%s%s", serve, args, code, out, errOut)
				}
				continue
			}
			if code != ExitOK {
				t.Fatalf("serve %v: %v: exit %d\n%s%s", serve, args, code, out, errOut)
			}
		}
		var out []entry
		for _, e := range auditEntries(t, regPath)[n:] {
			// The proposal's id is drawn at random: the same place in
			// either entry.
			x := entry{Action: string(e.Action), Actor: strings.ReplaceAll(e.Actor, id, "ID"), Detail: strings.ReplaceAll(detailOf(e), id, "ID"), Version: e.Version, Signed: e.Signature != nil}
			if e.Slug != nil {
				x.Slug = *e.Slug
			}
			out = append(out, x)
		}
		if code, _, errOut := run(t, nil, "audit", "verify", regPath); code != ExitOK {
			t.Errorf("serve %v: audit verify: %s", serve, errOut)
		}
		return out
	}
	files, served := acts(t, false), acts(t, true)
	if len(files) != 4 {
		t.Fatalf("on the files: %+v", files)
	}
	if len(served) != len(files) {
		t.Fatalf("entries on the files:\n%+v\nthrough the server:\n%+v", files, served)
	}
	for i := range files {
		if files[i] != served[i] {
			t.Errorf("entry %d: on the files %+v, through the server %+v", i, files[i], served[i])
		}
	}
	if files[0].Detail != "endorse add "+other+" https://coffee.example" || files[1].Detail != "add category zig-learning" || files[2].Detail != "accept proposal ID: it is" || files[2].Actor != "proposal ID accepted by "+app.LocalActor() {
		t.Errorf("details: %+v", files)
	}
}
