package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curation"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// initOptions are init's flags.
type initOptions struct{ name string }

func initFlags(f *Flags) {
	o := options[initOptions](f)
	f.StringVar(&o.name, "name", "THREEGS_CURATOR_NAME", "My curator", "the curator's display name, written as curator.name in the new registry")
}

// runInit makes a curator node in one step: a key, a starter registry that
// names it, and the registry's signature. Everything is checked before the
// first file is written, so a refusal leaves nothing behind.
func runInit(_ context.Context, env *Env, f *Flags) int {
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(env.Stderr, "3gs init: "+format+"\n", args...)
		return code
	}
	if len(f.Args()) != 1 {
		return fail(ExitUsage, "name the one folder to create, e.g. 3gs init my-node --name \"Ada's picks\"; got %d arguments", len(f.Args()))
	}
	dir, name := f.Args()[0], options[initOptions](f).name
	if strings.TrimSpace(name) == "" {
		return fail(ExitUsage, "--name (THREEGS_CURATOR_NAME) is empty; give the name readers will see as the curator, or leave it out for %q", "My curator")
	}
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fail(ExitFail, "%s exists and is not a folder; choose a new folder name", dir)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return fail(ExitFail, "cannot read %s: %v", dir, err)
		}
		if len(entries) > 0 {
			return fail(ExitFail, "%s already exists and is not empty; init writes only into a new or empty folder, so it never replaces a registry or a key. Choose a new folder name.", dir)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fail(ExitFail, "cannot use %s: %v", dir, err)
	}

	key, err := curatorkey.Generate()
	if err != nil {
		return fail(ExitFail, "cannot read random bytes: %v", err)
	}
	pub := curatorkey.URI(curatorkey.Public(key))
	now := time.Now()
	doc := starterRegistry(name, pub, now)
	data := gen.EncodeRegistry(&doc)
	// The starter's text is ours; only the name comes from the user, so a
	// problem there is a usage error naming --name, anything else a bug.
	if _, err := registry.Load(data); err != nil {
		var errs strictjson.Errors
		if errors.As(err, &errs) && len(errs) > 0 && errs[0].Path == "curator.name" {
			return fail(ExitUsage, "--name (THREEGS_CURATOR_NAME) %s; give a display name of 1 to 200 printable characters", errs[0].Reason)
		}
		return fail(ExitFail, "the starter registry does not load (%v); this is a bug in 3gs, please report it", loadProblem(err))
	}

	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(ExitFail, "cannot create %s: %v", dir, err)
	}
	keyPath := filepath.Join(dir, "curator.key")
	regPath := filepath.Join(dir, "registry.json")
	if err := curatorkey.WriteKeyFile(keyPath, key); err != nil {
		return fail(ExitFail, "%v", err)
	}
	// The node starts with its audit log: a start entry recording the
	// starter registry, and the signature covering it.
	if _, err := curation.Init(regPath, regPath+".audit.jsonl", data, key, now, signature.DefaultValidity); err != nil {
		var ie *store.InvalidError
		var ce *store.Error
		switch {
		case errors.As(err, &ie):
			return fail(ExitFail, "the starter registry does not load (%v); this is a bug in 3gs, please report it", loadProblem(ie.Err))
		case errors.As(err, &ce) && ce.InLog:
			return fail(ExitFail, "starting the audit log: %v\nRemove %s and run 3gs init again.", ce.Err, dir)
		}
		return fail(ExitFail, "%s: %v\nRemove %s and run 3gs init again.", regPath, err, dir)
	}

	q := signature.ShellQuote
	w := env.Stdout
	fmt.Fprintf(w, "Created a curator node for %s (%s) in %s:\n", name, pub, dir)
	fmt.Fprintf(w, "  %-22s the secret key (mode 0600): keep it private and backed up; whoever holds it signs as you\n", "curator.key")
	fmt.Fprintf(w, "  %-22s a starter registry with one example category; replace it with your own topics\n", "registry.json")
	fmt.Fprintf(w, "  %-22s its signature, valid for %d days: sign again before then\n", "registry.json"+signature.Suffix, int(signature.DefaultValidity.Hours()/24))
	fmt.Fprintf(w, "  %-22s its audit log: every change is recorded there, signed\n", "registry.json.audit.jsonl")
	fmt.Fprintf(w, "\nAfter editing the registry, check and sign it:\n  3gs validate %s\n  3gs sign --key-file %s %s\n", q(regPath), q(keyPath), q(regPath))
	fmt.Fprintf(w, "Serve it (--proposals on: a public node takes proposals from anyone):\n  3gs serve --registry %s --key-file %s --http 127.0.0.1:8080 --proposals on\n", q(regPath), q(keyPath))
	fmt.Fprintf(w, "Verify it, as a reader would:\n  3gs verify --pubkey %s %s\n", pub, q(regPath))
	// With their key: without it endorse leaves their registry unsigned,
	// which their server then refuses.
	fmt.Fprintf(w, "To be endorsed, send another curator this command, with the address others reach your server at (they run it with their own registry and key):\n  3gs endorse --registry THEIR/registry.json --key-file THEIR/curator.key --pubkey %s --url https://YOUR-HOST:PORT --name %s\n", pub, q(name))
	return ExitOK
}

// starterRegistry is a new curator's first registry: one category, in our
// words, about the standards a 3gs node rests on, so it is both valid and
// worth reading until the curator replaces it.
func starterRegistry(name, pub string, now time.Time) gen.Registry {
	return gen.Registry{
		Version:      "0.1.0",
		Updated:      now.UTC().Format(time.DateOnly),
		Curator:      gen.Curator{Name: name, Pubkey: pub},
		Endorsements: []gen.Endorsement{},
		Categories: map[string]gen.Category{
			"curating-with-3gs": {
				Name:        "Curating with 3gs (example)",
				Description: "An example to replace with your own topics: the standards a 3gs node rests on. The Model Context Protocol it answers agents with, the JSON Schema its registry file follows, and the Ed25519 signatures that prove who curated it.",
				QueryPatterns: []string{
					"what is the model context protocol",
					"how does an mcp server expose tools",
					"json schema validation basics",
					"how ed25519 signatures work",
					"how to check who signed a registry",
				},
				Sources: []gen.Source{
					{
						Rank: 1, Name: "Model Context Protocol", URL: "https://modelcontextprotocol.io/", Type: gen.SourceTypeDocumentation,
						Why: "The protocol's own site and specification: what a server offers, how agents call its tools, and how clients connect over stdio or HTTP.",
					},
					{
						Rank: 2, Name: "JSON Schema", URL: "https://json-schema.org/", Type: gen.SourceTypeDocumentation,
						Why: "The vocabulary a registry file is checked against; its guides explain the keywords such as required, pattern and enum that decide what validate accepts.",
					},
					{
						Rank: 3, Name: "RFC 8032: Edwards-Curve Digital Signature Algorithm (EdDSA)", URL: "https://www.rfc-editor.org/rfc/rfc8032", Type: gen.SourceTypeDocumentation,
						Why: "Defines Ed25519, the signature scheme behind curator keys and registry.json.sig, for anyone who wants to know exactly what verify checks.",
					},
				},
			},
		},
	}
}
