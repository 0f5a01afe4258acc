// Package mcpb builds what 3gs publishes beside its binaries: the manifest
// of an MCP Bundle (.mcpb, the archive Claude Desktop installs with one
// click) and the release's server.json for the MCP Registry.
//
// The bundle manifest is written from the generated tool table rather than
// by hand, so a bundle can never advertise a tool the binary inside it does
// not list, or miss one it does. One bundle is made per operating system
// and CPU: a manifest can choose a command per operating system
// (platform_overrides) but not per CPU, so a bundle holding one binary per
// CPU would need a launcher script, which a "binary" server cannot have.
// Each bundle therefore holds exactly one binary, server/3gs (server/3gs.exe
// on Windows), and names the one operating system it runs on.
package mcpb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/mcp"
)

// Platform is the operating system and CPU a bundle's binary is built for,
// in Go's names (GOOS, GOARCH).
type Platform struct {
	OS, Arch string
}

// Platforms are the targets a release makes a bundle for: the systems
// Claude Desktop runs on, on both CPUs each ships for, plus Linux, where
// other hosts install bundles.
var Platforms = []Platform{
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"linux", "amd64"}, {"linux", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

func (p Platform) String() string { return p.OS + "-" + p.Arch }

// hostOS is the operating system as MCPB names it: Node's process.platform,
// which says win32 where Go says windows.
func (p Platform) hostOS() string {
	if p.OS == "windows" {
		return "win32"
	}
	return p.OS
}

// Binary is the path of the server binary inside the bundle.
func (p Platform) Binary() string {
	if p.OS == "windows" {
		return "server/3gs.exe"
	}
	return "server/3gs"
}

func (p Platform) valid() bool {
	for _, q := range Platforms {
		if q == p {
			return true
		}
	}
	return false
}

// ParsePlatform reads "os-arch", as String writes it.
func ParsePlatform(s string) (Platform, error) {
	os, arch, _ := strings.Cut(s, "-")
	p := Platform{os, arch}
	if !p.valid() {
		return Platform{}, fmt.Errorf("no bundle is made for %q; the platforms are %s", s, platformList())
	}
	return p, nil
}

func platformList() string {
	var names []string
	for _, p := range Platforms {
		names = append(names, p.String())
	}
	return strings.Join(names, ", ")
}

// BundleName is the file name of a release's bundle for p: the version and
// the platform, so the files of one release sit side by side and the
// registry's download URL says what it fetches.
func BundleName(version string, p Platform) string {
	return "3gs-" + version + "-" + p.String() + ".mcpb"
}

// bundleNameRE reads a BundleName back.
var bundleNameRE = regexp.MustCompile(`^3gs-(.+)-([a-z0-9]+-[a-z0-9]+)\.mcpb$`)

// ParseBundleName is the version and platform a BundleName names.
func ParseBundleName(name string) (version string, p Platform, err error) {
	m := bundleNameRE.FindStringSubmatch(name)
	if m == nil {
		return "", Platform{}, fmt.Errorf("%s is not named 3gs-VERSION-OS-ARCH.mcpb", name)
	}
	p, err = ParsePlatform(m[2])
	return m[1], p, err
}

// semver is the version form both the bundle manifest and the registry
// expect: MAJOR.MINOR.PATCH with an optional pre-release. Claude Desktop
// compares bundle versions to offer updates, so "(devel)" or a commit hash
// would not do.
var semver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

// Version is a release version as bundles and server.json write it: a git
// tag's "v" is dropped, and anything but MAJOR.MINOR.PATCH[-PRE] is refused.
func Version(tag string) (string, error) {
	v := strings.TrimPrefix(tag, "v")
	if !semver.MatchString(v) {
		return "", fmt.Errorf("version %q is not MAJOR.MINOR.PATCH (a tag such as v1.2.3 or 1.2.3-rc.1)", tag)
	}
	return v, nil
}

// Manifest is an MCPB manifest (manifest_version 0.3, the newest one Claude
// Desktop releases of 2025 all read). Fields are in the order the format's
// documentation lists them, which is the order they are written in.
type Manifest struct {
	ManifestVersion string            `json:"manifest_version"`
	Name            string            `json:"name"`
	DisplayName     string            `json:"display_name"`
	Version         string            `json:"version"`
	Description     string            `json:"description"`
	LongDescription string            `json:"long_description"`
	Author          Author            `json:"author"`
	Repository      Repository        `json:"repository"`
	Homepage        string            `json:"homepage"`
	Documentation   string            `json:"documentation"`
	Support         string            `json:"support"`
	License         string            `json:"license"`
	Keywords        []string          `json:"keywords"`
	Server          Server            `json:"server"`
	Tools           []Tool            `json:"tools"`
	Compatibility   Compatibility     `json:"compatibility"`
	UserConfig      UserConfigOptions `json:"user_config"`
}

type Author struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

type Repository struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

type Server struct {
	Type       string    `json:"type"`
	EntryPoint string    `json:"entry_point"`
	MCPConfig  MCPConfig `json:"mcp_config"`
}

// MCPConfig is how the host starts the server. ${__dirname} is the
// directory the bundle was unpacked into; ${user_config.KEY} is what the
// user entered for KEY.
type MCPConfig struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

type Compatibility struct {
	Platforms []string `json:"platforms"`
}

// UserConfigOption is one setting the host asks the user for.
type UserConfigOption struct {
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
	Sensitive   bool   `json:"sensitive,omitempty"`
	// Default is a pointer so that an empty default is still written: it
	// is what makes an unset option substitute as "" (see userConfig);
	// omitempty leaves out only a nil pointer.
	Default *string `json:"default,omitempty"`
}

// UserConfigOptions keeps the options in the order the host shows them.
type UserConfigOptions []NamedOption

type NamedOption struct {
	Key string
	UserConfigOption
}

// MarshalJSON writes the options as the object the format wants, in order.
func (o UserConfigOptions) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, opt := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(opt.Key)
		v, err := marshal(opt.UserConfigOption)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

const (
	repoURL = "https://github.com/three-good-sources/3gs"
	// Description is the one line a catalogue shows; server.json says the
	// same, and a test holds them together.
	Description = "Three human-vetted sources for a topic, from a curated registry signed by its curator."
)

// userConfig is what the host asks the user for, each passed to 3gs in the
// environment variable that is the twin of its flag.
//
// Environment rather than arguments because an option left empty must
// leave 3gs at its default: as an argument, "--registry" followed by ""
// would be a flag with an empty value. And every option has an empty
// default because of how hosts substitute: the reference implementation of
// the format (getMcpConfigForManifest in @anthropic-ai/mcpb) replaces
// ${user_config.KEY} only when KEY has a value or a default, and otherwise
// leaves the text "${user_config.KEY}" in place, which 3gs would take for a
// file name or a token. With default "", an unset option becomes an empty
// variable, which 3gs reads as unset: the embedded registry, no token.
func userConfig() (UserConfigOptions, map[string]string) {
	empty := new(string)
	opts := UserConfigOptions{
		{"registry_path", UserConfigOption{
			Type: "file", Title: "Registry file",
			Description: "A registry.json to serve instead of the one built into 3gs (its signature, registry.json.sig, must sit beside it). Leave empty for the built-in registry.",
			Default:     empty,
		}},
		{"tokens_file", UserConfigOption{
			Type: "file", Title: "Tokens file",
			Description: "The tokens file made with 3gs token new. Needed only with a token.",
			Default:     empty,
		}},
		{"token", UserConfigOption{
			Type: "string", Title: "Token", Sensitive: true,
			Description: "A token from that file: a user token unlocks explain_match, an admin token the curator tools. Leave empty to use the public tools.",
			Default:     empty,
		}},
	}
	env := map[string]string{
		"REGISTRY_PATH":  "${user_config.registry_path}",
		"THREEGS_TOKENS": "${user_config.tokens_file}",
		"THREEGS_TOKEN":  "${user_config.token}",
	}
	return opts, env
}

// Build is the manifest of the bundle for p at version (MAJOR.MINOR.PATCH).
func Build(version string, p Platform) (*Manifest, error) {
	if !semver.MatchString(version) {
		return nil, fmt.Errorf("bundle version %q is not MAJOR.MINOR.PATCH", version)
	}
	if !p.valid() {
		return nil, fmt.Errorf("no bundle is made for %s; the platforms are %s", p, platformList())
	}
	tools, err := Tools()
	if err != nil {
		return nil, err
	}
	opts, env := userConfig()
	return &Manifest{
		ManifestVersion: "0.3",
		Name:            "3gs",
		DisplayName:     "3gs: three good sources",
		Version:         version,
		Description:     Description,
		LongDescription: "3gs answers an agent's \"where should I read about X?\" with three sources a human curator chose, ranked, each with a line on why, instead of a page of search results. It serves the registry built into it, signed by the project's curator, or a registry file of your own. It runs on this computer, and goes online only to fetch the signed registries of other curators the registry endorses, if it endorses any.",
		Author:          Author{Name: "three-good-sources", URL: repoURL},
		Repository:      Repository{Type: "git", URL: repoURL},
		Homepage:        repoURL,
		Documentation:   repoURL + "#readme",
		Support:         repoURL + "/issues",
		License:         "Apache-2.0",
		Keywords:        []string{"sources", "curation", "search", "reading", "learning"},
		Server: Server{
			Type:       "binary",
			EntryPoint: p.Binary(),
			MCPConfig: MCPConfig{
				// A forward slash works on Windows too: the host starts the
				// command without a shell, and Windows accepts either.
				Command: "${__dirname}/" + p.Binary(),
				Args:    []string{"serve"},
				Env:     env,
			},
		},
		Tools:         tools,
		Compatibility: Compatibility{Platforms: []string{p.hostOS()}},
		UserConfig:    opts,
	}, nil
}

// Tools is the bundle's tool list: what tools/list shows a caller without a
// token on the node the bundle starts (a plain serve: no peers, no
// proposals), read from the generated manifests, each with the first
// sentence of its description. A tool a token unlocks would say which
// token, but none is listed to a caller without one.
func Tools() ([]Tool, error) {
	type entry struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	var listed []entry
	for i := range gen.Tools {
		if t := &gen.Tools[i]; mcp.Listed(t, gen.TierPublic, mcp.Config{}) {
			var e entry
			if err := json.Unmarshal([]byte(t.Manifest), &e); err != nil {
				return nil, fmt.Errorf("the generated tools/list entry of %s does not parse: %w", t.Name, err)
			}
			listed = append(listed, e)
		}
	}
	tiers := map[string]gen.Tier{}
	for _, t := range gen.Tools {
		tiers[t.Name] = t.Tier
	}
	tools := make([]Tool, 0, len(listed))
	for _, t := range listed {
		d := firstSentence(t.Description)
		if tier := tiers[t.Name]; tier > gen.TierPublic {
			d += " Needs " + article(tier.String()) + " " + tier.String() + " token."
		}
		tools = append(tools, Tool{Name: t.Name, Description: d})
	}
	return tools, nil
}

// article is the indefinite article before a tier name: "an admin", "a
// user" (u is left out: "user" is said with a consonant).
func article(word string) string {
	if word != "" && strings.ContainsAny(word[:1], "aeio") {
		return "an"
	}
	return "a"
}

// firstSentence is a description up to its first full stop followed by a
// space: the schemas open each description with what the tool does and go
// on with when to use it and examples, which an install dialog need not
// show.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// JSON is the manifest as written into the bundle: indented, and without
// the HTML escaping encoding/json does by default, so that text such as
// "a & b" reads the same in the file as in the host.
func (m *Manifest) JSON() ([]byte, error) { return indented(m) }

// indented is v as the files this package writes hold it: marshalled
// without HTML escaping, indented by two spaces, with a final newline.
func indented(v any) ([]byte, error) {
	raw, err := marshal(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
