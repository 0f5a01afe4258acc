package mcpb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
)

// server.json, the file the MCP Registry publishes, is kept at the root of
// the repository with the version of the code beside it. It cannot hold a
// release's bundle digests, which exist only once the release is built, so
// its mcpb packages carry Placeholder, and StampServerJSON writes the
// release's copy: version, image tag, download URLs and digests filled in
// from what was built. The registry does not check a digest on publish
// (hosts check it on download), so the placeholder must never be
// published; StampServerJSON leaves none behind.

// Placeholder is the fileSha256 of the committed server.json's bundles.
var Placeholder = strings.Repeat("0", 64)

// ReleaseURL is where a release's bundle for p is downloaded from: a GitHub
// release asset, the only kind of URL the registry accepts for an mcpb
// package besides GitLab's.
func ReleaseURL(version string, p Platform) string {
	return repoURL + "/releases/download/v" + version + "/" + BundleName(version, p)
}

// serverJSON is the part of server.json a release changes, with everything
// else carried through as it is. Unknown members are refused when reading
// (DisallowUnknownFields), so a member added to server.json that this type
// lacks stops the release instead of vanishing from it.
type serverJSON struct {
	Schema      string          `json:"$schema"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	Version     string          `json:"version"`
	WebsiteURL  string          `json:"websiteUrl,omitempty"`
	Repository  json.RawMessage `json:"repository,omitempty"`
	Icons       json.RawMessage `json:"icons,omitempty"`
	Packages    []pkg           `json:"packages,omitempty"`
	Remotes     json.RawMessage `json:"remotes,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

type pkg struct {
	RegistryType         string          `json:"registryType"`
	RegistryBaseURL      string          `json:"registryBaseUrl,omitempty"`
	Identifier           string          `json:"identifier"`
	Version              string          `json:"version,omitempty"`
	FileSHA256           string          `json:"fileSha256,omitempty"`
	RuntimeHint          string          `json:"runtimeHint,omitempty"`
	Transport            json.RawMessage `json:"transport"`
	RuntimeArguments     json.RawMessage `json:"runtimeArguments,omitempty"`
	PackageArguments     json.RawMessage `json:"packageArguments,omitempty"`
	EnvironmentVariables json.RawMessage `json:"environmentVariables,omitempty"`
}

// Release is what a release stamps into server.json.
type Release struct {
	// Version is MAJOR.MINOR.PATCH[-PRE], without a "v".
	Version string
	// Bundles maps each platform to the hex SHA-256 of its bundle.
	Bundles map[Platform]string
	// ImageDigest, when set (sha256:HEX), pins the image by content as
	// well as by tag: a tag can be moved to another image, a digest not.
	ImageDigest string
}

var (
	sha256Hex   = regexp.MustCompile(`^[a-f0-9]{64}$`)
	imageDigest = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
)

// StampServerJSON is the release's server.json, made from the committed
// one: the version everywhere it appears (the server's, the image tag, each
// bundle's URL and version) and each bundle's digest. Every mcpb package
// must have a bundle in r and every bundle a package, so that a release
// neither publishes a download that does not exist nor builds one nobody
// is told about.
func StampServerJSON(committed []byte, r Release) ([]byte, error) {
	for plat, sum := range r.Bundles {
		if !sha256Hex.MatchString(sum) || sum == Placeholder {
			return nil, fmt.Errorf("the %s bundle's SHA-256 %q is not a digest", plat, sum)
		}
	}
	if r.ImageDigest != "" && !imageDigest.MatchString(r.ImageDigest) {
		return nil, fmt.Errorf("image digest %q is not sha256:HEX", r.ImageDigest)
	}
	return rewrite(committed, r)
}

// SetVersion is the committed server.json moved to another version, its
// bundles' digests left as Placeholder: what a contributor runs (mcpbgen
// setversion) when the next release's version is decided, since a release
// is refused unless server.json already names its version. Given the
// version the file has, it returns the file unchanged, which a test holds
// it to, so the committed file is always in the form this writes.
func SetVersion(committed []byte, version string) ([]byte, error) {
	r := Release{Version: version, Bundles: map[Platform]string{}}
	for _, p := range Platforms {
		r.Bundles[p] = Placeholder
	}
	return rewrite(committed, r)
}

// rewrite writes r into server.json. Bundles of platforms it does not
// list, and platforms it lists without a bundle, are refused.
func rewrite(committed []byte, r Release) ([]byte, error) {
	if !semver.MatchString(r.Version) {
		return nil, fmt.Errorf("version %q is not MAJOR.MINOR.PATCH", r.Version)
	}
	dec := json.NewDecoder(bytes.NewReader(committed))
	dec.DisallowUnknownFields()
	var sj serverJSON
	if err := dec.Decode(&sj); err != nil {
		return nil, fmt.Errorf("server.json: %w (a member internal/mcpb does not know is refused rather than dropped; add it to serverJSON)", err)
	}
	sj.Version = r.Version
	listed := map[Platform]bool{}
	for i := range sj.Packages {
		p := &sj.Packages[i]
		switch p.RegistryType {
		case "oci":
			if _, ok := ociRegistry(p.Identifier); !ok {
				return nil, fmt.Errorf("server.json: packages[%d]: %q is not a full image reference REGISTRY/NAME:TAG", i, p.Identifier)
			}
			// The committed tag, and a digest if there is one, name
			// another build: both are replaced.
			name, _, _ := strings.Cut(p.Identifier, "@")
			if at := strings.LastIndex(name, ":"); at > strings.LastIndex(name, "/") {
				name = name[:at]
			}
			p.Identifier = name + ":" + r.Version
			if r.ImageDigest != "" {
				p.Identifier += "@" + r.ImageDigest
			}
		case "mcpb":
			_, plat, err := ParseBundleName(path.Base(p.Identifier))
			if err != nil {
				return nil, fmt.Errorf("server.json: packages[%d]: %w", i, err)
			}
			sum, ok := r.Bundles[plat]
			if !ok {
				return nil, fmt.Errorf("server.json lists the %s bundle, and the release has none", plat)
			}
			if listed[plat] {
				return nil, fmt.Errorf("server.json lists the %s bundle twice", plat)
			}
			listed[plat] = true
			p.Identifier, p.Version, p.FileSHA256 = ReleaseURL(r.Version, plat), r.Version, sum
		default:
			return nil, fmt.Errorf("server.json: packages[%d] is a %q package, which a release does not know how to stamp", i, p.RegistryType)
		}
	}
	for plat := range r.Bundles {
		if !listed[plat] {
			return nil, fmt.Errorf("a %s bundle is made, and server.json does not list it", plat)
		}
	}
	return indented(sj)
}

// The MCP Registry checks a server.json twice: against its JSON Schema,
// and then, in its code, with rules the schema cannot state. RegistryProblems
// checks the second kind, as the registry's validators do them (release
// v1.8.9: internal/validators and internal/validators/registries), so that
// a server.json that passes the schema but would still be refused fails a
// test here rather than the publish step. Two checks need the network and
// are left to publishing: that the image carries the label
// io.modelcontextprotocol.server.name with the server's name, and that each
// bundle URL answers.
func RegistryProblems(data []byte) []string {
	var sj struct {
		Name       string `json:"name"`
		Version    string `json:"version"`
		WebsiteURL string `json:"websiteUrl"`
		Repository *struct {
			URL    string `json:"url"`
			Source string `json:"source"`
		} `json:"repository"`
		Packages []serverPackage `json:"packages"`
		Remotes  []transport     `json:"remotes"`
	}
	if err := json.Unmarshal(data, &sj); err != nil {
		return []string{"does not parse: " + err.Error()}
	}
	var problems []string
	add := func(where, format string, args ...any) {
		problems = append(problems, where+": "+fmt.Sprintf(format, args...))
	}
	if !serverName.MatchString(sj.Name) {
		add("name", "%q is not NAMESPACE/NAME (letters, digits, dots and hyphens, one slash)", sj.Name)
	}
	checkVersion(add, "version", sj.Version)
	if r := sj.Repository; r != nil && (r.Source != "github" || !githubRepo.MatchString(r.URL)) {
		add("repository", "%s %q is not a GitHub repository URL", r.Source, r.URL)
	}
	if u, err := url.Parse(sj.WebsiteURL); sj.WebsiteURL != "" && (err != nil || u.Scheme != "https") {
		add("websiteUrl", "%q is not an https URL", sj.WebsiteURL)
	}
	for i, p := range sj.Packages {
		p.check(add, fmt.Sprintf("packages[%d]", i))
	}
	for i, r := range sj.Remotes {
		var vars []string
		for name := range r.Variables {
			vars = append(vars, name)
		}
		r.check(add, fmt.Sprintf("remotes[%d]", i), vars, true)
	}
	return problems
}

// serverPackage is one of server.json's packages, as RegistryProblems reads it.
type serverPackage struct {
	RegistryType     string     `json:"registryType"`
	RegistryBaseURL  string     `json:"registryBaseUrl"`
	Identifier       string     `json:"identifier"`
	Version          string     `json:"version"`
	FileSHA256       string     `json:"fileSha256"`
	Transport        transport  `json:"transport"`
	RuntimeArguments []argument `json:"runtimeArguments"`
	PackageArguments []argument `json:"packageArguments"`
	Env              []struct {
		Name string `json:"name"`
	} `json:"environmentVariables"`
}

// check adds the problems the MCP Registry would find with package p, found at where.
func (p serverPackage) check(add func(string, string, ...any), where string) {
	if strings.Contains(p.Identifier, " ") {
		add(where+".identifier", "has a space")
	}
	checkVersion(add, where+".version", p.Version)
	if p.RegistryBaseURL != "" {
		add(where+".registryBaseUrl", "is refused for %s packages: the identifier says where the package is", p.RegistryType)
	}
	switch p.RegistryType {
	case "oci":
		if p.Version != "" {
			add(where+".version", "is refused for oci packages: the tag in the identifier is the version")
		}
		if p.FileSHA256 != "" {
			add(where+".fileSha256", "is refused for oci packages")
		}
		if reg, ok := ociRegistry(p.Identifier); !ok {
			add(where+".identifier", "%q is not a full image reference REGISTRY/NAME:TAG", p.Identifier)
		} else if !allowedOCIRegistry(reg) {
			add(where+".identifier", "registry %s is not one the MCP Registry accepts (docker.io, ghcr.io, quay.io, mcr.microsoft.com, *.pkg.dev, *.azurecr.io)", reg)
		}
	case "mcpb":
		if !sha256Hex.MatchString(p.FileSHA256) {
			add(where+".fileSha256", "%q is not 64 lower-case hex digits (it is required for mcpb packages)", p.FileSHA256)
		}
		u, err := url.Parse(p.Identifier)
		switch {
		case err != nil || u.Scheme != "https":
			add(where+".identifier", "%q is not an https URL", p.Identifier)
		case u.Host != "github.com" && u.Host != "gitlab.com":
			add(where+".identifier", "bundles must be GitHub or GitLab release assets, not on %s", u.Host)
		case u.Host == "github.com" && !githubAsset.MatchString(u.Path):
			add(where+".identifier", "%q is not /OWNER/REPO/releases/download/TAG/FILE", u.Path)
		case !strings.Contains(strings.ToLower(p.Identifier), "mcp"):
			add(where+".identifier", "a bundle URL must contain \"mcp\"")
		}
	default:
		// The registry knows npm, pypi, nuget, cargo, oci and mcpb, and
		// checks each against its own index; 3gs publishes only the
		// last two, and "go" is not among them at all.
		add(where+".registryType", "%q is not a package type 3gs publishes (oci, mcpb)", p.RegistryType)
	}
	vars := []string{}
	for _, e := range p.Env {
		vars = append(vars, e.Name)
	}
	for j, a := range p.RuntimeArguments {
		vars = append(vars, a.check(add, fmt.Sprintf("%s.runtimeArguments[%d]", where, j))...)
	}
	for j, a := range p.PackageArguments {
		vars = append(vars, a.check(add, fmt.Sprintf("%s.packageArguments[%d]", where, j))...)
	}
	p.Transport.check(add, where+".transport", vars, false)
}

var (
	serverName  = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9.-]*[a-zA-Z0-9]/[a-zA-Z0-9][a-zA-Z0-9._-]*[a-zA-Z0-9]$`)
	githubRepo  = regexp.MustCompile(`^https?://(www\.)?github\.com/[\w.-]+/[\w.-]+/?$`)
	githubAsset = regexp.MustCompile(`^/[a-zA-Z0-9]([a-zA-Z0-9-]{0,37}[a-zA-Z0-9])?/[a-zA-Z0-9._-]+/releases/download/[^/]+/[^/]+$`)
	// A version range rather than a version: ^1.2, ~1, >=1, 1.x, 1.*,
	// "1 - 2" or "1 || 2".
	versionRange = regexp.MustCompile(`^\s*(\^|~|>=|<=|>|<|=)|\|\||\s-\s|(^|\.)(x|X|\*)(\.|$|-)`)
	templateVar  = regexp.MustCompile(`\{([^}]+)\}`)
)

func checkVersion(add func(string, string, ...any), where, v string) {
	switch {
	case v == "latest":
		add(where, `"latest" is reserved; name a version`)
	case versionRange.MatchString(v):
		add(where, "%q is a range; name one version", v)
	}
}

// ociRegistry is the registry host an image reference names, and whether
// the reference is complete: a registry host (with a dot or a port, as
// Docker tells a host from a Docker Hub namespace), a repository, and a tag
// or a digest. The registry would also accept a bare Docker Hub name; a
// full reference is what 3gs publishes, so nothing is left to a default.
func ociRegistry(ref string) (string, bool) {
	host, rest, ok := strings.Cut(ref, "/")
	if !ok || !strings.ContainsAny(host, ".:") || rest == "" {
		return "", false
	}
	name, digest, hasDigest := strings.Cut(rest, "@")
	tagAt := strings.LastIndex(name, ":")
	if tagAt < 0 && !hasDigest {
		return "", false
	}
	if hasDigest && !strings.HasPrefix(digest, "sha256:") {
		return "", false
	}
	repo := name
	if tagAt >= 0 {
		repo = name[:tagAt]
		if tagAt == len(name)-1 {
			return "", false
		}
	}
	if repo == "" || repo != strings.ToLower(repo) || strings.ContainsAny(repo, " :@") {
		return "", false
	}
	return host, true
}

func allowedOCIRegistry(host string) bool {
	switch host {
	case "docker.io", "registry-1.docker.io", "index.docker.io", "ghcr.io", "quay.io", "mcr.microsoft.com":
		return true
	}
	return strings.HasSuffix(host, ".pkg.dev") || strings.HasSuffix(host, ".azurecr.io")
}

type transport struct {
	Type      string                     `json:"type"`
	URL       string                     `json:"url"`
	Variables map[string]json.RawMessage `json:"variables"`
}

// check applies the registry's transport rules: stdio has no URL; the two
// HTTP transports need an http(s) URL whose {variables} are all defined.
// A remote must also be https and not on this machine, since it is a
// server people reach over the network.
func (t transport) check(add func(string, string, ...any), where string, vars []string, remote bool) {
	switch {
	case t.Type == "stdio" && !remote:
		if t.URL != "" {
			add(where+".url", "a stdio transport has no URL")
		}
		return
	case t.Type == "streamable-http", t.Type == "sse":
	default:
		add(where+".type", "%q is not a transport the registry knows here", t.Type)
		return
	}
	if t.URL == "" {
		add(where+".url", "a %s transport needs a URL", t.Type)
		return
	}
	for _, m := range templateVar.FindAllStringSubmatch(t.URL, -1) {
		if !slices.Contains(vars, m[1]) {
			add(where+".url", "{%s} is not a variable defined for it (defined: %v)", m[1], vars)
		}
	}
	u, err := url.Parse(templateVar.ReplaceAllString(t.URL, "x"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		add(where+".url", "%q is not an http(s) URL", t.URL)
		return
	}
	if remote {
		h := u.Hostname()
		if u.Scheme != "https" || h == "localhost" || h == "127.0.0.1" || strings.HasSuffix(h, ".localhost") {
			add(where+".url", "a remote must be an https URL of another machine, not %q", t.URL)
		}
	}
}

type argument struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	Value     string `json:"value"`
	Default   string `json:"default"`
	ValueHint string `json:"valueHint"`
	HasValue  bool   `json:"-"`
}

func (a *argument) UnmarshalJSON(data []byte) error {
	type plain argument
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	_, a.HasValue = raw["value"]
	return json.Unmarshal(data, (*plain)(a))
}

// check applies the registry's argument rules and returns the names a
// transport URL may use as {variables}.
func (a argument) check(add func(string, string, ...any), where string) []string {
	switch a.Type {
	case "named":
		switch {
		case a.Name == "":
			add(where+".name", "a named argument needs a name")
		case strings.ContainsAny(a.Name, "<> $"):
			add(where+".name", "%q holds more than a flag name", a.Name)
		}
		if a.Name != "" && strings.HasPrefix(a.Value, a.Name) {
			add(where+".value", "%q repeats the name %q", a.Value, a.Name)
		}
		if a.Name != "" && strings.HasPrefix(a.Default, a.Name) {
			add(where+".default", "%q repeats the name %q", a.Default, a.Name)
		}
	case "positional":
		if !a.HasValue && a.ValueHint == "" {
			add(where, "a positional argument needs a value or a valueHint")
		}
	default:
		add(where+".type", "%q is neither positional nor named", a.Type)
	}
	var names []string
	for _, n := range []string{a.Name, a.ValueHint} {
		if n != "" {
			names = append(names, n)
		}
	}
	return names
}
