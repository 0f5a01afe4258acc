package cli

import (
	"os"
	"strings"
	"testing"
)

// --catalog-max and its twin THREEGS_CATALOG_MAX set how large a registry
// serve lists whole in its instructions: 150 by default, 0 for none, the
// flag winning over the twin, and a negative or non-number refused.
func TestCatalogMaxFlagAndTwin(t *testing.T) {
	cases := []struct {
		env  string
		args []string
		want int
		err  string
	}{
		{want: 150},
		{env: "7", want: 7},
		{args: []string{"--catalog-max", "0"}, want: 0},
		{env: "7", args: []string{"--catalog-max", "300"}, want: 300},
		{args: []string{"--catalog-max", "-1"}, err: "--catalog-max (THREEGS_CATALOG_MAX) must be a whole number of at least 0"},
		{env: "many", err: "--catalog-max (THREEGS_CATALOG_MAX) must be a whole number"},
	}
	for _, c := range cases {
		env := &Env{Stderr: os.Stderr, Getenv: func(k string) string {
			if k == "THREEGS_CATALOG_MAX" {
				return c.env
			}
			return ""
		}}
		f := newFlags(command{name: "serve", flags: serveFlags}, env)
		if err := f.fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		got, err := parseServe(env, f)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("env %q args %v: error %v, want %q", c.env, c.args, err, c.err)
			}
		case err != nil:
			t.Errorf("env %q args %v: %v", c.env, c.args, err)
		case got.catalogMax != c.want || got.app(env).CatalogMax != c.want:
			t.Errorf("env %q args %v: catalog max %d (app %d), want %d", c.env, c.args, got.catalogMax, got.app(env).CatalogMax, c.want)
		}
	}
}
