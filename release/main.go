// Command release builds the 3gs release artifacts from the repository it
// sits in: the 3gs binary for linux, darwin and windows on amd64 and arm64,
// a CycloneDX SBOM per binary, the container image (a docker-loadable
// tarball per Linux architecture and an OCI archive holding the
// multi-platform index), and SHA256SUMS over all of them.
//
//	go run -C release . -snapshot           # any commit, version v0.0.0-snapshot+<commit>
//	go run -C release . -version v0.2.0     # a clean tree; default: the tag on HEAD
//
// Every artifact is reproducible: the same commit and Go toolchain give the
// same bytes, whatever the directory, the machine or the time of day. The
// tool is a module of its own so its dependency (go-containerregistry,
// which writes the image without a Docker daemon) never enters 3gs's
// go.mod. docs/release.md says why this and not GoReleaser or ko.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// allPlatforms are the release targets, GOOS/GOARCH.
var allPlatforms = []string{
	"linux/amd64", "linux/arm64",
	"darwin/amd64", "darwin/arm64",
	"windows/amd64", "windows/arm64",
}

type options struct {
	snapshot  bool
	version   string
	out       string
	clean     bool
	platforms []string
	imageRepo string
	noImage   bool
}

func main() {
	var o options
	platforms := strings.Join(allPlatforms, ",")
	flag.BoolVar(&o.snapshot, "snapshot", false, "build any state of the tree, versioned v0.0.0-snapshot+COMMIT (with .dirty when it has changes)")
	flag.StringVar(&o.version, "version", "", "release version, vMAJOR.MINOR.PATCH[-PRERELEASE]; default: the tag on HEAD. Not with -snapshot")
	flag.StringVar(&o.out, "out", "dist", "output directory; a relative path is taken from the repository's root")
	flag.BoolVar(&o.clean, "clean", false, "remove the output directory first when it exists (otherwise it must be empty)")
	flag.StringVar(&platforms, "platforms", platforms, "comma-separated GOOS/GOARCH targets; the image is built for the linux ones")
	flag.StringVar(&o.imageRepo, "image-repo", "ghcr.io/three-good-sources/3gs", "repository the image is tagged for")
	flag.BoolVar(&o.noImage, "no-image", false, "skip the container image")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "release: unexpected argument %q\n", flag.Arg(0))
		flag.Usage()
		os.Exit(2)
	}
	for _, p := range strings.Split(platforms, ",") {
		if p = strings.TrimSpace(p); p != "" {
			o.platforms = append(o.platforms, p)
		}
	}
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "release: %v\n", err)
		os.Exit(1)
	}
}

func run(o options) error {
	started := time.Now()
	root, err := findRoot()
	if err != nil {
		return err
	}
	meta, err := readServerJSON(root)
	if err != nil {
		return err
	}
	src, err := readSource(root)
	if err != nil {
		return err
	}
	st, err := stampFor(o, src, meta)
	if err != nil {
		return err
	}
	out := o.out
	if !filepath.IsAbs(out) {
		out = filepath.Join(root, out)
	}
	if err := prepareOut(out, o.clean); err != nil {
		return err
	}
	logf("3gs %s (commit %s%s), source date %s, into %s", st.version, st.commit, map[bool]string{true: ", with uncommitted changes"}[st.modified], st.date.Format(time.RFC3339), out)

	bins := map[string]string{} // platform → binary path
	for _, p := range o.platforms {
		goos, goarch, ok := strings.Cut(p, "/")
		if !ok || goos == "" || goarch == "" {
			return fmt.Errorf("-platforms: %q is not GOOS/GOARCH", p)
		}
		t := time.Now()
		bin, err := buildBinary(root, out, goos, goarch, st)
		if err != nil {
			return err
		}
		if err := writeSBOM(bin, st, meta); err != nil {
			return err
		}
		bins[p] = bin
		logf("built %s in %s", filepath.Base(bin), time.Since(t).Round(time.Millisecond))
	}
	if !o.noImage {
		var linux []imageBinary
		for _, p := range o.platforms {
			if goos, goarch, _ := strings.Cut(p, "/"); goos == "linux" {
				linux = append(linux, imageBinary{arch: goarch, path: bins[p]})
			}
		}
		if len(linux) > 0 {
			t := time.Now()
			if err := writeImages(out, o.imageRepo, linux, st, meta); err != nil {
				return err
			}
			logf("images written in %s", time.Since(t).Round(time.Millisecond))
		}
	}
	if err := writeChecksums(out); err != nil {
		return err
	}
	logf("done in %s", time.Since(started).Round(time.Millisecond))
	return listArtifacts(os.Stdout, out)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "release: "+format+"\n", args...)
}

// findRoot is the checkout of github.com/three-good-sources/3gs this tool
// is run from (release/ or the root itself).
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && modulePath(data) == mainModule {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no checkout of %s at or above %s; run this from the repository (go run -C release .)", mainModule, dir)
		}
	}
}

const mainModule = "github.com/three-good-sources/3gs"

func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// prepareOut makes the output directory, which must hold no earlier
// artifacts: SHA256SUMS covers every file in it.
func prepareOut(out string, clean bool) error {
	if clean {
		if err := os.RemoveAll(out); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(out)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is not empty; remove it or add -clean", out)
	}
	return os.MkdirAll(out, 0o755)
}

// writeChecksums writes SHA256SUMS in sha256sum's format, so
// `sha256sum -c SHA256SUMS` in the directory checks everything.
func writeChecksums(out string) error {
	entries, err := os.ReadDir(out)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, e := range entries { // ReadDir sorts by name
		if e.Name() == checksumsFile || !e.Type().IsRegular() {
			continue
		}
		sum, err := fileSHA256(filepath.Join(out, e.Name()))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, e.Name())
	}
	return os.WriteFile(filepath.Join(out, checksumsFile), []byte(b.String()), 0o644)
}

const checksumsFile = "SHA256SUMS"

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func listArtifacts(w io.Writer, out string) error {
	entries, err := os.ReadDir(out)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	for _, n := range names {
		fi, err := os.Stat(filepath.Join(out, n))
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%12d  %s\n", fi.Size(), n)
	}
	return nil
}
