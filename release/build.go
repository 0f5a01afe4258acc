package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// stampPackage holds the variables -X sets (internal/cli/version.go).
const stampPackage = mainModule + "/internal/cli"

// binaryName is the artifact's file name: 3gs-linux-amd64, 3gs-windows-arm64.exe.
func binaryName(goos, goarch string) string {
	name := "3gs-" + goos + "-" + goarch
	if goos == "windows" {
		name += ".exe"
	}
	return name
}

// buildFlags are the go build flags of a release binary.
//
//   - -trimpath: no directory of the build machine in the binary, so a
//     checkout anywhere gives the same bytes.
//   - -buildvcs=false: the commit is stamped with -X instead. VCS stamping
//     would read .git (absent in a Docker build context) and is turned off
//     by some environments' GOFLAGS; an explicit stamp is the same
//     everywhere.
//   - -s -w: no symbol table and no DWARF: a fifth smaller (linux/amd64:
//     28.0 MB → 22.8 MB when this was written).
//     Panics still print full stack traces (those come from the pclntab,
//     which stays) and `go version -m` still reads the build information;
//     only a debugger loses its symbols, and it can use a local build.
//
// The Go build ID stays (no -buildid=): with -trimpath it is a hash of the
// inputs alone; two copies of the tree in different directories built the
// same bytes when this was written.
func buildFlags(out string, st stamp) []string {
	ldflags := []string{"-s", "-w",
		"-X", stampPackage + ".stampVersion=" + st.version,
		"-X", stampPackage + ".stampCommit=" + st.commit,
	}
	if st.modified {
		ldflags = append(ldflags, "-X", stampPackage+".stampModified=true")
	}
	return []string{"build", "-o", out, "-trimpath", "-buildvcs=false", "-ldflags=" + strings.Join(ldflags, " "), "./cmd/3gs"}
}

// buildEnv is the environment of a release build: CGO off (a static
// binary, and one build machine for every target), the baseline
// instruction sets (a release runs on any amd64 or arm64 machine,
// whatever GOAMD64 the builder's environment sets), and GOFLAGS replaced,
// so that flags set for everyday work (-race, -tags, -cover) do not reach
// the release.
func buildEnv(goos, goarch string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "CGO_ENABLED", "GOOS", "GOARCH", "GOAMD64", "GOARM64", "GOFLAGS":
		default:
			env = append(env, kv)
		}
	}
	return append(env, "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOAMD64=v1", "GOARM64=v8.0", "GOFLAGS=-mod=readonly")
}

func buildBinary(root, out, goos, goarch string, st stamp) (string, error) {
	bin := filepath.Join(out, binaryName(goos, goarch))
	cmd := exec.Command("go", buildFlags(bin, st)...)
	cmd.Dir = root
	cmd.Env = buildEnv(goos, goarch)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building %s/%s: %v\n%s", goos, goarch, err, output.String())
	}
	return bin, nil
}
