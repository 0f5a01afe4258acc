// Command mcpbgen writes what a release publishes besides its binaries,
// from the code rather than by hand:
//
//	mcpbgen manifest -version 1.2.3 -platform linux-amd64 > stage/manifest.json
//	mcpbgen serverjson -version 1.2.3 [-image-digest sha256:HEX] dist/3gs-1.2.3-*.mcpb > dist/server.json
//	mcpbgen setversion -version 1.2.3
//
// manifest prints the MCP Bundle manifest for one platform (see package
// mcpb); release/mcpb/pack.sh runs it. serverjson prints the release's
// server.json: the committed one (-in, default server.json) with the
// version, image tag and each bundle's download URL and SHA-256 filled in
// from the bundle files named. setversion moves the committed server.json
// (-in) to the next release's version, in place, before that release is
// tagged.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/three-good-sources/3gs/internal/mcpb"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mcpbgen:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("name a command: manifest, serverjson or setversion")
	}
	fs := flag.NewFlagSet("mcpbgen "+args[0], flag.ContinueOnError)
	version := fs.String("version", "", "release version, MAJOR.MINOR.PATCH (a leading v is dropped)")
	var platform, in, digest *string
	switch args[0] {
	case "manifest":
		platform = fs.String("platform", "", "OS-ARCH the bundle is for, such as linux-amd64")
	case "serverjson":
		in = fs.String("in", "server.json", "the committed server.json")
		digest = fs.String("image-digest", "", "the image's digest (sha256:HEX), to pin it beside its tag")
	case "setversion":
		in = fs.String("in", "server.json", "the committed server.json, rewritten in place")
	default:
		return fmt.Errorf("unknown command %q: manifest, serverjson or setversion", args[0])
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	v, err := mcpb.Version(*version)
	if err != nil {
		return err
	}
	switch args[0] {
	case "manifest":
		return manifest(v, *platform, out)
	case "serverjson":
		return serverJSON(v, *in, *digest, fs.Args(), out)
	}
	return setVersion(v, *in)
}

// manifest writes the bundle manifest of version v for platform.
func manifest(v, platform string, out io.Writer) error {
	p, err := mcpb.ParsePlatform(platform)
	if err != nil {
		return err
	}
	m, err := mcpb.Build(v, p)
	if err != nil {
		return err
	}
	data, err := m.JSON()
	if err != nil {
		return err
	}
	_, err = out.Write(data)
	return err
}

// serverJSON writes the committed server.json at in stamped with version
// v, the image digest and the SHA-256 of each bundle file named.
func serverJSON(v, in, digest string, bundles []string, out io.Writer) error {
	r := mcpb.Release{Version: v, Bundles: map[mcpb.Platform]string{}, ImageDigest: digest}
	for _, path := range bundles {
		bv, p, err := mcpb.ParseBundleName(filepath.Base(path))
		if err != nil {
			return err
		}
		if bv != v {
			return fmt.Errorf("%s is a bundle of version %s, not %s", path, bv, v)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		r.Bundles[p] = hex.EncodeToString(sum[:])
	}
	committed, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	stamped, err := mcpb.StampServerJSON(committed, r)
	if err != nil {
		return err
	}
	if problems := mcpb.RegistryProblems(stamped); len(problems) > 0 {
		return fmt.Errorf("the registry would refuse the result: %v", problems)
	}
	_, err = out.Write(stamped)
	return err
}

// setVersion rewrites the committed server.json at in to version v.
func setVersion(v, in string) error {
	committed, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	moved, err := mcpb.SetVersion(committed, v)
	if err != nil {
		return err
	}
	return os.WriteFile(in, moved, 0o644)
}
