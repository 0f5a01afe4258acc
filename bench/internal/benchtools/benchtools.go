// Package benchtools is what the benchmark commands share: the comparison
// servers get 3gs's own tool logic, so a benchmark compares protocol and
// transport handling and nothing else, and the drivers pick the registry
// and build the servers the same way.
package benchtools

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/evalset"
	"github.com/three-good-sources/3gs/internal/matcher"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/registry/registrytest"
	"github.com/three-good-sources/3gs/internal/tools"
)

// Queries are the get_sources questions the drivers asked of the fixture
// registry before the benchmark mix (MixV1), all of them answered
// confidently; a driver asks them of a registry given with -registry.
var Queries = []string{
	"how do I run a bitcoin full node", "self host my email server", "learn rust ownership",
	"best password manager", "harden ssh on linux", "threat modeling with stride",
	"home assistant without cloud", "build an mcp server in go",
}

// Mix is a benchmark mix: a registry and the questions asked of it,
// split by the answer 3gs gives, so a driver can report the sure
// (confident) and the unsure (not confident, or no match: the listing)
// requests apart as well as the mix whole.
type Mix struct {
	Name     string
	Registry string   // absolute path of its registry.json
	All      []string // every question, in the mix's order
	Sure     []string // those answered confidently
	Unsure   []string // the others
}

// MixV1 is the frozen benchmark mix (internal/evalset.MixV1: questions of
// the development set, typos, long and off-topic ones and nonsense
// included, over its registry), with root the 3gs module's directory
// ("..", from bench/). Its registry is copied into dir, as a server
// writes its lock files beside the registry it serves and the repository's
// copy is test data. The questions are split by asking this tree's tools
// in process, which is what the 3gs binary built from it answers.
func MixV1(root, dir string) Mix {
	set := evalset.MixV1(root)
	qs, err := set.Questions()
	if err != nil {
		log.Fatal(err)
	}
	data, err := os.ReadFile(set.Registry)
	if err != nil {
		log.Fatal(err)
	}
	path, err := filepath.Abs(filepath.Join(dir, set.Name+"-registry.json"))
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		log.Fatal(err)
	}
	m := Mix{Name: set.Name, Registry: path, All: qs}
	h := Handlers(path)
	for _, q := range qs {
		if _, err := h.GetSources(context.Background(), &gen.GetSourcesInput{Query: &q}); err == nil {
			m.Sure = append(m.Sure, q)
		} else {
			m.Unsure = append(m.Unsure, q)
		}
	}
	return m
}

// maxRegistryBytes is the comparison servers' registry limit: they load
// whatever the benchmark generates, as 3gs does with
// --max-registry-bytes, so no size is refused by one server only.
const maxRegistryBytes = 1 << 30

// Handlers are 3gs's tools over the registry at path (the embedded one
// when empty), as `3gs serve` builds them.
func Handlers(path string) *tools.Handlers {
	var reg *registry.Registry
	var err error
	if path != "" {
		reg, err = registry.LoadFileLimit(path, maxRegistryBytes)
	} else {
		reg, err = registry.Load(threegs.DefaultRegistry)
	}
	if err != nil {
		log.Fatal(err)
	}
	return tools.New(tools.Config{Registry: reg, Matcher: matcher.New(reg), Threshold: tools.DefaultThreshold})
}

// Manifest is the part of a tool's tools/list entry a server library
// needs to register it.
type Manifest struct {
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

// ManifestOf reads t's generated manifest.
func ManifestOf(t gen.Tool) Manifest {
	var m Manifest
	if err := json.Unmarshal([]byte(t.Manifest), &m); err != nil {
		log.Fatal(err)
	}
	return m
}

// Registry is the registry flag's value when that file exists; otherwise,
// after saying so, empty, which means 3gs's embedded registry.
func Registry(path string) string {
	if path == "" {
		return ""
	}
	if _, err := os.Stat(path); err != nil {
		log.Printf("registry %s not found; using 3gs's embedded registry", path)
		return ""
	}
	return path
}

// Build runs a go build command, stopping the benchmark if it fails.
//
// Every binary is built as the releases, the container image and the
// MCP Bundle build 3gs (release/build.go): with cgo off, a static
// executable. A build with cgo links the C library besides, about 1.3 MiB
// more resident, which no user's binary carries.
func Build(cmd *exec.Cmd) {
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("%v: %v", cmd.Args, err)
	}
}

// Binaries makes a temporary directory and builds into it the 3gs binary
// and the comparison server in the bench module's folder pkg (./mcpgo,
// ./gosdk), as every driver starts. It returns the directory, for the
// caller to remove, and the two binaries' paths.
func Binaries(prefix, pkg string) (dir, threegs, other string) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		log.Fatal(err)
	}
	threegs, other = filepath.Join(dir, "3gs"), filepath.Join(dir, filepath.Base(pkg))
	Build(exec.Command("go", "build", "-C", "..", "-o", threegs, "./cmd/3gs"))
	Build(exec.Command("go", "build", "-o", other, pkg))
	return dir, threegs, other
}

// Generated writes a generated registry of n categories into dir and
// returns its path and questions about it (registrytest), the same for
// every run: a size dimension for the benchmarks.
func Generated(dir string, n int) (path string, queries []string) {
	doc := registrytest.Generate(n, 1)
	path = filepath.Join(dir, fmt.Sprintf("generated-%d.json", n))
	if err := os.WriteFile(path, gen.EncodeRegistry(doc), 0o644); err != nil {
		log.Fatal(err)
	}
	return path, registrytest.Queries(doc, 512, 1)
}

// Describe names a generated registry of n categories.
func Describe(n int) string { return fmt.Sprintf("%d generated categories", n) }

// ProcessCPU is the CPU time process pid has used so far, user and
// system, from /proc (zero where there is none). The clock tick is taken
// to be 100 Hz, as on every Linux this runs on.
func ProcessCPU(pid int) time.Duration {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name may hold spaces; the fields counted follow its ")".
	rest := string(data)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * (time.Second / 100)
}

// Proc is a server started on stdio: its process, its stdin, and
// buffered ends for writing requests and reading answers.
type Proc struct {
	Cmd   *exec.Cmd
	Stdin io.WriteCloser
	In    *bufio.Writer
	Out   *bufio.Reader
}

// StartStdio starts bin with args, its stderr passed through, or exits
// the benchmark when it cannot.
func StartStdio(bin string, args ...string) *Proc {
	cmd := exec.Command(bin, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		log.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	return &Proc{Cmd: cmd, Stdin: stdin, In: bufio.NewWriterSize(stdin, 64<<10), Out: bufio.NewReaderSize(stdout, 1<<20)}
}
