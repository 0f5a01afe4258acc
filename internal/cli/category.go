package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/app"
	"github.com/three-good-sources/3gs/internal/curation"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// The curator's everyday edit of one category, without opening the whole
// registry: the category as a JSON object (registry.schema.json's
// category, what registry.json holds under "categories"."SLUG"), checked
// by the generated strict decoder and the registry's rules, then applied
// by curation.Node.UpsertCategory / RemoveCategory: on the files when no
// server holds the registry, through the running server's upsert_category
// and remove_category tools when one does (throughserver.go).

// categorySubcommands are the verbs of `3gs category`.
var categorySubcommands = []command{
	{"add", "SLUG", "add a category: its JSON object from --file PATH or stdin, or written in $EDITOR with --editor (from a template); recorded in the audit log and signed with --key-file, or by the running server", categoryFlags, runCategoryAdd},
	{"edit", "SLUG", "replace a category: its new JSON object from --file PATH or stdin, or --editor to change the current one in $EDITOR", categoryFlags, runCategoryEdit},
	{"remove", "SLUG", "remove a category (a registry keeps at least one)", categoryRemoveFlags, runCategoryRemove},
}

// categoryOptions are the category verbs' flags.
type categoryOptions struct {
	file   string
	editor bool
	signedWrite
}

func categoryRemoveFlags(f *Flags) {
	o := options[categoryOptions](f)
	o.flags(f, "the registry file to change",
		"the curator's secret key file, to sign the registry after the change (not needed when a running server holds the registry: it signs with its own)",
		"how long the new signature vouches for the registry",
		"")
}

func categoryFlags(f *Flags) {
	categoryRemoveFlags(f)
	o := options[categoryOptions](f)
	f.StringVar(&o.file, "file", "THREEGS_CATEGORY_FILE", "", "read the category's JSON object from this file (- for stdin, which is also what no --file and no --editor read)")
	f.BoolVar(&o.editor, "editor", "THREEGS_CATEGORY_EDITOR", "open $VISUAL or $EDITOR (vi when neither is set) on the category: the current one for edit, a template for add")
}

// slugPattern is a category slug's, as the registry schema has it.
var slugPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// categoryTarget is the registry (--registry) and the slug, the one
// argument, of a category verb.
func categoryTarget(env *Env, verb string, f *Flags) (reg, slug string, ok bool) {
	o := options[categoryOptions](f)
	args := f.Args()
	if len(args) != 1 || !slugPattern.MatchString(args[0]) || len(args[0]) > 64 {
		fmt.Fprintf(env.Stderr, "3gs category %s: give one category slug (lower-case words joined by hyphens, e.g. rust-learning), e.g. 3gs category %s rust-learning --registry R\n", verb, verb)
		return "", "", false
	}
	if o.registry == "" {
		fmt.Fprintf(env.Stderr, "3gs category %s: name the registry with --registry PATH (or REGISTRY_PATH)\n", verb)
		return "", "", false
	}
	if o.file != "" && o.editor {
		fmt.Fprintf(env.Stderr, "3gs category %s: give the category one way: --file PATH (or - for stdin), or --editor\n", verb)
		return "", "", false
	}
	return o.registry, args[0], true
}

func runCategoryAdd(_ context.Context, env *Env, f *Flags) int {
	return runCategoryUpsert(env, f, "add")
}
func runCategoryEdit(_ context.Context, env *Env, f *Flags) int {
	return runCategoryUpsert(env, f, "edit")
}

// upsertArgs are upsert_category's arguments, as the category verbs send
// them to the server holding the registry.
type upsertArgs struct {
	Slug     string          `json:"slug"`
	Category json.RawMessage `json:"category"`
}

// categoryCall is one category verb under way: its command's name, the
// registry and slug it names, its flags and the signer they make.
type categoryCall struct {
	env            *Env
	cmd, reg, slug string
	o              *categoryOptions
	sg             signer
}

// startCategory reads what every category verb takes: the registry and
// the slug, and the key to sign with. ok is false, with the exit code,
// when it said why they will not do.
func startCategory(env *Env, f *Flags, verb string) (c categoryCall, exit int, ok bool) {
	c = categoryCall{env: env, cmd: "category " + verb, o: options[categoryOptions](f)}
	if c.reg, c.slug, ok = categoryTarget(env, verb, f); !ok {
		return c, ExitUsage, false
	}
	var err error
	if c.sg, err = c.o.signer(env, c.cmd); err != nil {
		fmt.Fprintf(env.Stderr, "3gs %s: %v\n", c.cmd, err)
		return c, ExitUsage, false
	}
	return c, ExitOK, true
}

// write makes the change: through the server holding the registry, as
// its tool with args, or on the files by local, whose report (what it
// did) comes before what the change wrote. from names where the category
// came from ("" for none), for the fix of a refused one.
func (c categoryCall) write(tool string, args any, from string, local func(*curation.Node) (report string, ch *curation.Changed, err error)) int {
	w, ok := takeWriter(c.env, c.cmd, c.reg)
	if !ok {
		return ExitFail
	}
	defer w.release()
	if w.server {
		return w.callServer(c.env, c.cmd, c.reg, tool, args, c.sg.key != nil)
	}
	logPath := auditLogPath(c.o.auditLog, c.reg)
	report, ch, err := local(curation.NewFile(c.sg.file(c.env, c.cmd, c.reg, logPath)))
	if err != nil {
		categoryFailed(c.env, c.cmd, c.reg, logPath, c.sg, err, from)
		return ExitFail
	}
	fmt.Fprintln(c.env.Stdout, report)
	printChanged(c.env, c.reg, logPath, c.sg, ch)
	return ExitOK
}

func runCategoryUpsert(env *Env, f *Flags, verb string) int {
	c, exit, ok := startCategory(env, f, verb)
	if !ok {
		return exit
	}
	cmd, reg, slug := c.cmd, c.reg, c.slug
	cur, err := registry.LoadFileLimit(reg, c.sg.limit)
	if err != nil {
		problem, fix := registryProblem(reg, err, "")
		fmt.Fprintf(env.Stderr, "3gs %s: not changed: %s\nFix: %s.\n", cmd, problem, fix)
		return ExitFail
	}
	existing, exists := cur.Category(slug)
	switch {
	case verb == "add" && exists:
		fmt.Fprintf(env.Stderr, "3gs category add: %s already has a category %s; change it with 3gs category edit %s --registry %s\n", reg, slug, slug, signature.ShellQuote(reg))
		return ExitFail
	case verb == "edit" && !exists:
		fmt.Fprintf(env.Stderr, "3gs category edit: %s has no category %s; add it with 3gs category add %s --registry %s (the registry lists its slugs under \"categories\")\n", reg, slug, slug, signature.ShellQuote(reg))
		return ExitFail
	}
	var start []byte
	if exists {
		start = categoryJSON(slug, *existing.Category)
	} else {
		start = []byte(categoryTemplate)
	}
	data, from, ok := categoryInput(env, cmd, c.o, start)
	if !ok {
		return ExitFail
	}
	cat, ok := decodeCategory(env, cmd, slug, data, from)
	if !ok {
		return ExitFail
	}
	if exists && bytes.Equal(categoryJSON(slug, cat), start) {
		fmt.Fprintf(env.Stdout, "The category %s is unchanged; nothing was written.\n", slug)
		return ExitOK
	}
	return c.write("upsert_category", upsertArgs{Slug: slug, Category: compact(data)}, from, func(n *curation.Node) (string, *curation.Changed, error) {
		done, err := n.UpsertCategory(app.LocalActor(), slug, cat)
		if err != nil {
			return "", nil, err
		}
		verbDone := "Replaced"
		if done.Created {
			verbDone = "Added"
		}
		return fmt.Sprintf("%s category %s in %s.", verbDone, slug, reg), done.Changed, nil
	})
}

func runCategoryRemove(_ context.Context, env *Env, f *Flags) int {
	c, exit, ok := startCategory(env, f, "remove")
	if !ok {
		return exit
	}
	return c.write("remove_category", struct {
		Slug string `json:"slug"`
	}{c.slug}, "", func(n *curation.Node) (string, *curation.Changed, error) {
		done, err := n.RemoveCategory(app.LocalActor(), c.slug)
		return fmt.Sprintf("Removed category %s from %s.", c.slug, c.reg), done, err
	})
}

// printChanged says what a change wrote, and what is left to do.
func printChanged(env *Env, reg, logPath string, sg signer, c *curation.Changed) {
	if sg.key != nil {
		fmt.Fprintf(env.Stdout, "Version %s → %s, signed with %s (%s), recorded as seq %d of the audit log %s.\n",
			c.Old.Registry.Version(), c.New.Registry.Version(), sg.from, reg+signature.Suffix, c.Head.Seq, logPath)
		return
	}
	fmt.Fprintf(env.Stdout, "Version %s → %s.\n", c.Old.Registry.Version(), c.New.Registry.Version())
	fmt.Fprintf(env.Stderr, "Not signed: the registry names no curator key; sign it once it does with 3gs sign --key-file KEY %s\n", signature.ShellQuote(reg))
}

// categoryFailed says why a category change was not made; from names
// where the category came from, for a fix.
func categoryFailed(env *Env, cmd, reg, logPath string, sg signer, err error, from string) {
	var (
		errs strictjson.Errors
		re   *curation.ReadError
		ke   *store.KeyNeededError
		we   *curation.WrongKeyError
		ue   *curation.UnverifiedError
		ie   *store.InvalidError
		le   *store.LogError
		tl   *registry.TooLargeError
	)
	switch {
	case errors.As(err, &errs):
		fmt.Fprintf(env.Stderr, "3gs %s: not changed: %d %s:\n", cmd, len(errs), plural(len(errs), "problem", "problems"))
		for _, p := range errs {
			fmt.Fprintf(env.Stderr, "  %s\n", p.Error())
		}
		if from != "" {
			fmt.Fprintf(env.Stderr, "Fix each in %s and run the command again.\n", from)
		}
	case errors.As(err, &re) && re.Path == reg:
		problem, fix := registryProblem(reg, re.Err, "")
		fmt.Fprintf(env.Stderr, "3gs %s: not changed: %s\nFix: %s.\n", cmd, problem, fix)
	case errors.As(err, &re):
		fmt.Fprintf(env.Stderr, "3gs %s: not changed: %v\n", cmd, re.Err)
	case errors.As(err, &ke):
		fmt.Fprintf(env.Stderr, "3gs %s: not changed: %s names a curator key, so the change must be signed: give the curator's key with --key-file (or %s)\n", cmd, reg, secretKeyEnv)
	case errors.As(err, &we):
		fmt.Fprintf(env.Stderr, "3gs %s: not changed: the key from %s cannot sign %s: its curator.pubkey is %s. Pass the curator's own key with --key-file.\n", cmd, sg.from, reg, we.Curator)
	case errors.As(err, &ue):
		fmt.Fprintf(env.Stderr, "3gs %s: not changed: %s%s does not verify (%v), so %s was changed since it was signed; signing now would sign those changes too. Check it with 3gs verify, sign your own edits with 3gs sign, then run this again.\n", cmd, reg, signature.Suffix, ue.Problem, reg)
	case errors.As(err, &tl):
		fmt.Fprintf(env.Stderr, "3gs %s: not changed: %v; raise --max-registry-bytes, or remove categories first\n", cmd, tl)
	case errors.As(err, &ie):
		fmt.Fprintf(env.Stderr, "3gs %s: not changed: with this change %s would not be a valid registry: %v\n", cmd, reg, loadProblem(ie.Err))
	case errors.As(err, &le):
		logFailed(env, cmd, reg, logPath, curatorkey.Public(sg.key), le.Err)
	default:
		fmt.Fprintf(env.Stderr, "3gs %s: %v\n", cmd, err)
	}
}

// categoryTemplate is what category add --editor starts from: every
// field the schema requires, to be filled in.
const categoryTemplate = `{
  "name": "",
  "description": "",
  "query_patterns": ["", "", ""],
  "sources": [
    {"rank": 1, "name": "", "url": "https://", "type": "documentation", "why": ""},
    {"rank": 2, "name": "", "url": "https://", "type": "tutorial", "why": ""},
    {"rank": 3, "name": "", "url": "https://", "type": "book", "why": ""}
  ]
}
`

// categoryJSON is the category c as registry.json writes it (schema
// order), indented, for the editor and to compare an edit with.
func categoryJSON(slug string, c gen.Category) []byte {
	doc := gen.EncodeRegistry(&gen.Registry{Categories: map[string]gen.Category{slug: c}})
	var top struct {
		Categories map[string]json.RawMessage `json:"categories"`
	}
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil
	}
	var b bytes.Buffer
	if err := json.Indent(&b, top.Categories[slug], "", "  "); err != nil {
		return nil
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// compact is data, valid JSON, without white space between tokens.
func compact(data []byte) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		return data
	}
	return b.Bytes()
}

// categoryInput reads the category's JSON as the flags say: a file, stdin,
// or the editor opened on start. from names where it came from, for the
// messages.
func categoryInput(env *Env, cmd string, o *categoryOptions, start []byte) (data []byte, from string, ok bool) {
	switch {
	case o.editor:
		return editCategory(env, cmd, start)
	case o.file != "" && o.file != "-":
		data, err := os.ReadFile(o.file)
		if err != nil {
			fmt.Fprintf(env.Stderr, "3gs %s: %v\n", cmd, err)
			return nil, "", false
		}
		return data, o.file, true
	}
	if fi, isFile := env.Stdin.(*os.File); isFile {
		if st, err := fi.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			fmt.Fprintf(env.Stderr, "3gs %s: reading the category's JSON object from the terminal; end it with Ctrl-D (or give --file PATH, or --editor)\n", cmd)
		}
	}
	data, err := io.ReadAll(io.LimitReader(env.Stdin, 1<<20))
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs %s: reading stdin: %v\n", cmd, err)
		return nil, "", false
	}
	if len(bytes.TrimSpace(data)) == 0 {
		fmt.Fprintf(env.Stderr, "3gs %s: no category on stdin: give its JSON object there, or --file PATH, or --editor to write it in $EDITOR\n", cmd)
		return nil, "", false
	}
	return data, "stdin", true
}

// editCategory opens $VISUAL or $EDITOR (vi) on start, in a file of its
// own that is kept when the result does not decode, so the work is not
// lost.
func editCategory(env *Env, cmd string, start []byte) ([]byte, string, bool) {
	editor := env.Getenv("VISUAL")
	if editor == "" {
		editor = env.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	dir, err := os.MkdirTemp("", "3gs-category-")
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs %s: %v\n", cmd, err)
		return nil, "", false
	}
	path := filepath.Join(dir, "category.json")
	if err := os.WriteFile(path, start, 0o600); err != nil {
		fmt.Fprintf(env.Stderr, "3gs %s: %v\n", cmd, err)
		return nil, "", false
	}
	// The editor setting may carry arguments (code --wait): the shell
	// splits it, and the file comes last.
	c := exec.Command("/bin/sh", "-c", editor+` "$1"`, "sh", path)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := c.Run(); err != nil {
		fmt.Fprintf(env.Stderr, "3gs %s: the editor (%s) failed: %v; nothing was changed. What was written is kept in %s\n", cmd, editor, err, path)
		return nil, "", false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs %s: %v\n", cmd, err)
		return nil, "", false
	}
	return data, path, true
}

// decodeCategory decodes data strictly as the category slug (the
// generated decoder of upsert_category's arguments, which takes the
// registry schema's category), then checks it by the registry's rules.
// from names where it came from: its problems are reported with their
// paths, and how to fix them.
func decodeCategory(env *Env, cmd, slug string, data []byte, from string) (gen.Category, bool) {
	var probe json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil || len(probe) == 0 || probe[0] != '{' {
		why := "it is not one JSON object"
		if err != nil {
			why = err.Error()
		}
		fmt.Fprintf(env.Stderr, "3gs %s: not changed: the category from %s is not valid JSON: %s.\nFix: give one JSON object with name, description, query_patterns and sources, as registry.json holds under \"categories\" (see schema/CONTRACT.md).\n", cmd, from, why)
		return gen.Category{}, false
	}
	in, err := gen.DecodeUpsertCategoryInput(append(append([]byte(`{"slug":"`+slug+`","category":`), compact(data)...), '}'))
	if err == nil {
		errs, _ := registry.CheckCategory("category", slug, in.Category)
		if len(errs) > 0 {
			err = errs
		}
	}
	var errs strictjson.Errors
	if errors.As(err, &errs) {
		fmt.Fprintf(env.Stderr, "3gs %s: not changed: the category from %s has %d %s:\n", cmd, from, len(errs), plural(len(errs), "problem", "problems"))
		for _, p := range errs {
			if at := strings.TrimPrefix(strings.TrimPrefix(p.Path, "category"), "."); at != "" {
				fmt.Fprintf(env.Stderr, "  %s: %s\n", at, p.Reason)
			} else {
				fmt.Fprintf(env.Stderr, "  %s\n", p.Reason)
			}
		}
		if from == "stdin" {
			fmt.Fprintln(env.Stderr, "Fix each and run the command again.")
		} else {
			fmt.Fprintf(env.Stderr, "Fix each in %s and run the command again with --file %s.\n", from, signature.ShellQuote(from))
		}
		return gen.Category{}, false
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "3gs %s: not changed: %v\n", cmd, err)
		return gen.Category{}, false
	}
	return in.Category, true
}
