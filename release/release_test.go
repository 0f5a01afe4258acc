package main

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestPURL(t *testing.T) {
	for path, want := range map[string]string{
		"github.com/spf13/cobra@v1.10.2":                       "pkg:golang/github.com/spf13/cobra@v1.10.2",
		"github.com/three-good-sources/3gs@v0.0.0-snapshot+ab": "pkg:golang/github.com/three-good-sources/3gs@v0.0.0-snapshot%2Bab",
		"github.com/BurntSushi/toml@v1.0.0":                    "pkg:golang/github.com/BurntSushi/toml@v1.0.0",
		"example.com/a b@":                                     "pkg:golang/example.com/a%20b",
	} {
		p, v, _ := strings.Cut(path, "@")
		if got := purl(p, v); got != want {
			t.Errorf("purl(%q, %q) = %q, want %q", p, v, got, want)
		}
	}
}

func TestStamp(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	meta := serverMeta{Version: "1.2.0"}
	when := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	clean := source{commit: "0123456789abcdef0123456789abcdef01234567", time: when, tags: []string{"v1.2.0", "not-a-version"}}
	dirty := clean
	dirty.modified = true

	for _, c := range []struct {
		o       options
		src     source
		version string
		err     string
	}{
		{options{snapshot: true}, clean, "v0.0.0-snapshot+0123456789ab", ""},
		{options{snapshot: true}, dirty, "v0.0.0-snapshot+0123456789ab.dirty", ""},
		{options{snapshot: true}, source{}, "v0.0.0-snapshot+unknown", ""},
		{options{snapshot: true, version: "v1.2.0"}, clean, "", "-version is for releases"},
		{options{}, clean, "v1.2.0", ""},
		{options{version: "v1.2.0"}, source{commit: clean.commit, time: when}, "v1.2.0", ""},
		{options{}, source{commit: clean.commit}, "", "no version tag"},
		{options{}, dirty, "", "uncommitted changes"},
		{options{version: "1.2.0"}, clean, "", "not vMAJOR.MINOR.PATCH"},
		{options{version: "v1.3.0"}, clean, "", `server.json says version "1.2.0"`},
		{options{}, source{commit: clean.commit, tags: []string{"v1.2.0", "v1.2.0-rc.1"}}, "", "two version tags"},
	} {
		st, err := stampFor(c.o, c.src, meta)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%+v %+v: error %v, want %q", c.o, c.src, err, c.err)
		case c.err == "" && (err != nil || st.version != c.version):
			t.Errorf("%+v %+v: %q %v, want %q", c.o, c.src, st.version, err, c.version)
		}
	}

	st, _ := stampFor(options{snapshot: true}, clean, meta)
	if !st.date.Equal(when) {
		t.Errorf("date %v, want the commit's %v", st.date, when)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "86400")
	if st, _ := stampFor(options{snapshot: true}, clean, meta); st.date.Unix() != 86400 {
		t.Errorf("SOURCE_DATE_EPOCH: date %v", st.date)
	}
}

func TestSBOM(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.8 X:greenteagc",
		Main:      debug.Module{Path: mainModule, Version: "(devel)"},
		Deps: []*debug.Module{
			{Path: "github.com/spf13/cobra", Version: "v1.10.2", Sum: "h1:abc="},
			{Path: "example.com/old", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/new", Version: "v1.0.1", Sum: "h1:def="}},
		},
		Settings: []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "CGO_ENABLED", Value: "0"}},
	}
	st := stamp{version: "v1.2.0", commit: "f00d"}
	bom := sbomOf(bi, "beef", st, serverMeta{Description: "d"})
	m := bom.Metadata.Component
	if m.PURL != "pkg:golang/"+mainModule+"@v1.2.0" || m.Version != "v1.2.0" || m.Hashes[0].Content != "beef" {
		t.Errorf("main component %+v", m)
	}
	var purls []string
	for _, c := range bom.Components {
		purls = append(purls, c.PURL)
	}
	if got := strings.Join(purls, " "); got != "pkg:golang/stdlib@1.26.8 pkg:golang/github.com/spf13/cobra@v1.10.2 pkg:golang/example.com/new@v1.0.1" {
		t.Errorf("components %s", got)
	}
	if p := bom.Components[2].Properties; len(p) != 2 || p[0].Value != "example.com/old@v1.0.0" || p[1].Value != "h1:def=" {
		t.Errorf("replaced module's properties %+v", p)
	}
	if d := bom.Dependencies[0]; d.Ref != m.BOMRef || len(d.DependsOn) != 3 {
		t.Errorf("dependencies %+v", bom.Dependencies)
	}
}

// The layer is a function of its inputs, with the owners and modes the
// image's user needs.
func TestRootfs(t *testing.T) {
	date := time.Unix(1700000000, 0).UTC()
	a, err := rootfs([]byte("binary"), []byte("certs"), date)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := rootfs([]byte("binary"), []byte("certs"), date)
	if !bytes.Equal(a, b) {
		t.Error("two layers from the same inputs differ")
	}
	want := map[string]string{
		"3gs":            "0 0 755",
		"data/":          "65532 65532 700",
		"tmp/":           "0 0 1777",
		"etc/passwd":     "0 0 644",
		caCertFile:       "0 0 644",
		"etc/ssl/":       "0 0 755",
		"etc/ssl/certs/": "0 0 755",
	}
	tr := tar.NewReader(bytes.NewReader(a))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(date) {
			t.Errorf("%s dated %v", h.Name, h.ModTime)
		}
		if w, ok := want[h.Name]; ok {
			if got := fmt.Sprintf("%d %d %o", h.Uid, h.Gid, h.Mode); got != w {
				t.Errorf("%s: uid gid mode %s, want %s", h.Name, got, w)
			}
			delete(want, h.Name)
		}
		if h.Name == "etc/passwd" {
			data, _ := io.ReadAll(tr)
			if !strings.Contains(string(data), "nonroot:x:65532:65532:") {
				t.Errorf("passwd:\n%s", data)
			}
		}
	}
	for n := range want {
		t.Errorf("no %s in the layer", n)
	}
}

// The CA bundle parses, and holds the roots Go would fall back on.
func TestCACertificates(t *testing.T) {
	data, err := caCertificates()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n < 100 {
		t.Errorf("%d certificates", n)
	}
	if pool := x509.NewCertPool(); !pool.AppendCertsFromPEM(data) {
		t.Error("not a PEM bundle a cert pool reads")
	}
}
