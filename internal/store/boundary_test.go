package store

import (
	"go/ast"
	"go/parser"
	"go/token"
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
