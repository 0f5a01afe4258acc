package store

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The store is the one place that writes a registry, its signature or its
// audit log: the curator tools and the commands call it, and none of them
// writes those files itself (issue 35). Reading them stays open to all.
func TestOnlyTheStoreWrites(t *testing.T) {
	forbidden := map[string]map[string]bool{
		// safefile's writes; its bounded reads and its lock are for anyone.
		"github.com/three-good-sources/3gs/internal/safefile":  {"Write": true, "WriteNoFollow": true, "WriteNoFollowFrom": true, "Create": true, "CreateFrom": true, "AppendAt": true, "Cut": true, "RemoveStale": true},
		"github.com/three-good-sources/3gs/internal/auditlog":  {"Open": true, "Cut": true, "SaveCut": true, "Repair": true},
		"github.com/three-good-sources/3gs/internal/signature": {"WriteSigned": true, "WriteSignedWith": true, "Sign": true, "SignWith": true},
	}
	for _, dir := range []string{"../tools", "../cli"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			names := map[string]map[string]bool{}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				funcs, bad := forbidden[p]
				if !bad {
					continue
				}
				if funcs == nil {
					t.Errorf("%s imports %s: write through internal/store instead", path, p)
					continue
				}
				name := filepath.Base(p)
				if imp.Name != nil {
					name = imp.Name.Name
				}
				names[name] = funcs
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if sel.Sel.Name == "Checkpoint" {
					t.Errorf("%s takes an audit log checkpoint: changes and their undo belong in internal/store", path)
				}
				if x, ok := sel.X.(*ast.Ident); ok && names[x.Name][sel.Sel.Name] {
					t.Errorf("%s calls %s.%s: write through internal/store instead", path, x.Name, sel.Sel.Name)
				}
				return true
			})
		}
	}
}

// Every change to a registry file is one function of internal/curation,
// which the tools and the commands call: none of them calls a change
// method of store.Editor or store.File, or store.Init, itself (issue 45).
func TestOnlyCurationChangesTheStore(t *testing.T) {
	changes := map[string]map[string]bool{
		"Editor": {"Change": true, "Renew": true, "Reload": true, "Open": true, "Served": true, "CheckBase": true},
		"File":   {"Change": true, "ChangeCategory": true, "Sign": true, "Migrate": true},
	}
	dirs := []string{"../tools", "../cli"}
	// The packages are type-checked against the export data the go
	// command builds (and caches), so a method is known by its receiver's
	// type, whatever the variable holding it is called.
	out, err := exec.Command("go", append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}, dirs...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok {
			exports[path] = file
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) })
	const storePath = "github.com/three-good-sources/3gs/internal/store"
	for _, dir := range dirs {
		paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		var files []*ast.File
		for _, path := range paths {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}, Uses: map[*ast.Ident]types.Object{}}
		if _, err := (&types.Config{Importer: imp}).Check(dir, fset, files, info); err != nil {
			t.Fatalf("type-checking %s: %v", dir, err)
		}
		for id, obj := range info.Uses {
			if fn, ok := obj.(*types.Func); ok && fn.Pkg() != nil && fn.Pkg().Path() == storePath && fn.Name() == "Init" {
				t.Errorf("%s calls store.Init: make the change through internal/curation", fset.Position(id.Pos()))
			}
		}
		for sel, s := range info.Selections {
			if s.Kind() != types.MethodVal {
				continue
			}
			fn := s.Obj().(*types.Func)
			recv := fn.Type().(*types.Signature).Recv().Type()
			if p, ok := recv.(*types.Pointer); ok {
				recv = p.Elem()
			}
			named, ok := recv.(*types.Named)
			if !ok || named.Obj().Pkg() == nil || named.Obj().Pkg().Path() != storePath {
				continue
			}
			if changes[named.Obj().Name()][fn.Name()] {
				t.Errorf("%s calls store.%s.%s: make the change through internal/curation", fset.Position(sel.Pos()), named.Obj().Name(), fn.Name())
			}
		}
	}
}
