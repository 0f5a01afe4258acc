package main

import (
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
)

// A CycloneDX 1.6 bill of materials, the few fields written here. The
// binary's own build information names every module linked into it, which
// is exactly what the SBOM is to list, and reading it needs only
// debug/buildinfo; so the writer is ours, with nothing dated or random in
// its output, rather than one more tool to install, pin and trust (syft,
// or cyclonedx-gomod, which writes a timestamp and a random serial number
// unless told -notimestamp -noserial).
type cdxBOM struct {
	Schema       string          `json:"$schema"`
	BOMFormat    string          `json:"bomFormat"`
	SpecVersion  string          `json:"specVersion"`
	Version      int             `json:"version"`
	Metadata     cdxMetadata     `json:"metadata"`
	Components   []cdxComponent  `json:"components"`
	Dependencies []cdxDependency `json:"dependencies"`
}

type cdxMetadata struct {
	Tools     cdxTools     `json:"tools"`
	Component cdxComponent `json:"component"`
}

type cdxTools struct {
	Components []cdxComponent `json:"components"`
}

type cdxComponent struct {
	BOMRef             string           `json:"bom-ref,omitempty"`
	Type               string           `json:"type"`
	Name               string           `json:"name"`
	Version            string           `json:"version,omitempty"`
	Description        string           `json:"description,omitempty"`
	Hashes             []cdxHash        `json:"hashes,omitempty"`
	Licenses           []cdxLicense     `json:"licenses,omitempty"`
	PURL               string           `json:"purl,omitempty"`
	ExternalReferences []cdxExternalRef `json:"externalReferences,omitempty"`
	Properties         []cdxProperty    `json:"properties,omitempty"`
}

type cdxHash struct {
	Alg     string `json:"alg"`
	Content string `json:"content"`
}

type cdxLicense struct {
	License struct {
		ID string `json:"id"`
	} `json:"license"`
}

type cdxExternalRef struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

type cdxProperty struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type cdxDependency struct {
	Ref       string   `json:"ref"`
	DependsOn []string `json:"dependsOn,omitempty"`
}

// sbomPath is where the SBOM of a binary goes: beside it, named after
// it without .exe, as 3gs-linux-amd64.cdx.json.
func sbomPath(bin string) string {
	return strings.TrimSuffix(bin, ".exe") + ".cdx.json"
}

func writeSBOM(bin string, st stamp, meta serverMeta) error {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("reading the build information of %s: %v", bin, err)
	}
	sum, err := fileSHA256(bin)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(sbomOf(bi, sum, st, meta), "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(sbomPath(bin), append(data, '\n'), 0o644)
}

// sbomOf describes the binary with build information bi and SHA-256 sum.
// The build information lists the modules linked in, not how they depend
// on each other, so the main module is recorded as depending on all of
// them directly and nothing is said about the rest of the graph.
func sbomOf(bi *debug.BuildInfo, sum string, st stamp, meta serverMeta) cdxBOM {
	main := cdxComponent{
		Type:        "application",
		Name:        bi.Main.Path,
		Version:     st.version, // the build information says (devel): the version is stamped
		Description: meta.Description,
		Hashes:      []cdxHash{{Alg: "SHA-256", Content: sum}},
		PURL:        purl(bi.Main.Path, st.version),
		ExternalReferences: []cdxExternalRef{
			{Type: "vcs", URL: meta.Repository.URL},
			{Type: "website", URL: meta.WebsiteURL},
		},
		Properties: []cdxProperty{{Name: "go:commit", Value: st.commit}, {Name: "go:version", Value: bi.GoVersion}},
	}
	main.BOMRef = main.PURL
	if meta.Meta.Publisher.License != "" {
		var l cdxLicense
		l.License.ID = meta.Meta.Publisher.License
		main.Licenses = []cdxLicense{l}
	}
	// Every build setting (GOOS, GOARCH, CGO_ENABLED, -trimpath, -ldflags
	// with the stamp), in the order the go command recorded them.
	for _, s := range bi.Settings {
		main.Properties = append(main.Properties, cdxProperty{Name: "go:build:" + s.Key, Value: s.Value})
	}

	// The standard library is named as Syft names it (pkg:golang/stdlib),
	// which is what vulnerability scanners such as Grype match Go's own
	// advisories against.
	goVersion := strings.TrimPrefix(strings.Fields(bi.GoVersion + " ")[0], "go")
	std := cdxComponent{Type: "library", Name: "stdlib", Version: goVersion, PURL: purl("stdlib", goVersion)}
	std.BOMRef = std.PURL
	components := []cdxComponent{std}
	for _, dep := range bi.Deps {
		m, props := dep, []cdxProperty(nil)
		if dep.Replace != nil {
			m = dep.Replace
			props = append(props, cdxProperty{Name: "go:module:replaces", Value: dep.Path + "@" + dep.Version})
		}
		if m.Sum != "" {
			// The go.sum hash: what `go mod verify` checks a copy against.
			props = append(props, cdxProperty{Name: "go:module:sum", Value: m.Sum})
		}
		c := cdxComponent{Type: "library", Name: m.Path, Version: m.Version, PURL: purl(m.Path, m.Version), Properties: props}
		c.BOMRef = c.PURL
		components = append(components, c)
	}
	deps := []cdxDependency{{Ref: main.BOMRef}}
	for _, c := range components {
		deps[0].DependsOn = append(deps[0].DependsOn, c.BOMRef)
		deps = append(deps, cdxDependency{Ref: c.BOMRef})
	}
	return cdxBOM{
		Schema:      "http://cyclonedx.org/schema/bom-1.6.schema.json",
		BOMFormat:   "CycloneDX",
		SpecVersion: "1.6",
		Version:     1,
		Metadata: cdxMetadata{
			Tools:     cdxTools{Components: []cdxComponent{{Type: "application", Name: "3gs release (release/ in " + mainModule + ")"}}},
			Component: main,
		},
		Components:   components,
		Dependencies: deps,
	}
}

// purl is the package URL of a Go module: pkg:golang/PATH@VERSION, each
// path segment and the version percent-encoded (a snapshot's "+" is %2B).
func purl(path, version string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i] = purlEscape(s)
	}
	p := "pkg:golang/" + strings.Join(segs, "/")
	if version != "" {
		p += "@" + purlEscape(version)
	}
	return p
}

func purlEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
