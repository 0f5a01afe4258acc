package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/three-good-sources/3gs/internal/testkit"
)

// composeFile is the part of deploy/compose.yaml the test reads.
type composeFile struct {
	Name     string `yaml:"name"`
	Services map[string]struct {
		Build struct {
			Context    string `yaml:"context"`
			Dockerfile string `yaml:"dockerfile"`
		} `yaml:"build"`
		Image       string            `yaml:"image"`
		Command     any               `yaml:"command"`
		Ports       []string          `yaml:"ports"`
		Volumes     []string          `yaml:"volumes"`
		Environment map[string]string `yaml:"environment"`
		Restart     string            `yaml:"restart"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

// dockerfile is what the Dockerfile at the root says about the image it
// builds.
type dockerfile struct {
	froms                []string
	user                 string
	entrypoint, cmd      []string
	env                  map[string]string
	volumes, expose      []string
	workdir, buildScript string
}

func readDockerfile(t *testing.T, path string) dockerfile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := dockerfile{env: map[string]string{}}
	text := strings.ReplaceAll(string(data), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		instr, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		jsonArray := func() []string {
			var a []string
			if err := json.Unmarshal([]byte(rest), &a); err != nil {
				t.Fatalf("Dockerfile: %s %s is not a JSON array (the exec form): %v", instr, rest, err)
			}
			return a
		}
		switch strings.ToUpper(instr) {
		case "FROM":
			d.froms = append(d.froms, rest)
		case "USER":
			d.user = rest
		case "ENTRYPOINT":
			d.entrypoint = jsonArray()
		case "CMD":
			d.cmd = jsonArray()
		case "ENV":
			for _, kv := range strings.Fields(rest) {
				k, v, _ := strings.Cut(kv, "=")
				d.env[k] = v
			}
		case "VOLUME":
			d.volumes = append(d.volumes, strings.Fields(rest)...)
		case "EXPOSE":
			d.expose = append(d.expose, strings.Fields(rest)...)
		case "WORKDIR":
			d.workdir = rest
		case "RUN":
			d.buildScript += rest + "\n"
		}
	}
	return d
}

// TestContainerRecipe checks "Run it in a container" in docs/operating.md
// and deploy/compose.yaml against the Dockerfile and 3gs serve, then runs
// the recipe with the binary in place of the image: each `run --rm 3gs
// ARGS` as 3gs ARGS, and `up -d` as the image's command with the compose
// file's environment, a temporary folder standing for the volume at /data
// and the port on loopback; /health must answer with the node's signed
// registry. The image itself is built only where a Docker daemon answers.
func TestContainerRecipe(t *testing.T) {
	bin := testkit.Binary(t)
	data, err := os.ReadFile(filepath.Join(testkit.Root(), "deploy", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var compose composeFile
	if err := yaml.UnmarshalWithOptions(data, &compose, yaml.Strict()); err != nil {
		t.Fatalf("deploy/compose.yaml: %v", err)
	}
	svc, ok := compose.Services["3gs"]
	if !ok || len(compose.Services) != 1 {
		t.Fatalf("deploy/compose.yaml has services %v, want the one named 3gs", compose.Services)
	}
	if !slices.Contains([]string{"no", "always", "on-failure", "unless-stopped"}, svc.Restart) {
		t.Errorf("restart: %q is not a restart policy of compose", svc.Restart)
	}
	if svc.Command != nil {
		t.Errorf("the service overrides the image's command with %v; the docs say it runs the image's", svc.Command)
	}
	dockerfilePath := filepath.Join(testkit.Root(), "deploy", svc.Build.Context, svc.Build.Dockerfile)
	if filepath.Clean(filepath.Join(testkit.Root(), "deploy", svc.Build.Context)) != filepath.Clean(testkit.Root()) || svc.Build.Dockerfile != "Dockerfile" {
		t.Errorf("build: context %q, dockerfile %q: want the clone's root (..) and its Dockerfile", svc.Build.Context, svc.Build.Dockerfile)
	}
	df := readDockerfile(t, dockerfilePath)

	// The image: built in one stage, run FROM scratch as a numeric user
	// that is not root, a static binary.
	if len(df.froms) < 2 || !strings.HasSuffix(strings.ToLower(df.froms[0]), " as build") || df.froms[len(df.froms)-1] != "scratch" {
		t.Errorf("Dockerfile stages %v: want a build stage, then FROM scratch", df.froms)
	}
	if uid, _, _ := strings.Cut(df.user, ":"); !regexp.MustCompile(`^[0-9]+$`).MatchString(uid) || uid == "0" {
		t.Errorf("Dockerfile USER %q: want a numeric user other than root", df.user)
	}
	if !strings.Contains(df.buildScript, "CGO_ENABLED=0") || !strings.Contains(df.buildScript, "./cmd/3gs") {
		t.Errorf("Dockerfile does not build ./cmd/3gs static (CGO_ENABLED=0):\n%s", df.buildScript)
	}
	if !slices.Equal(df.entrypoint, []string{"/3gs"}) || len(df.cmd) < 3 || df.cmd[0] != "serve" {
		t.Fatalf("Dockerfile ENTRYPOINT %v CMD %v: want /3gs serve ...", df.entrypoint, df.cmd)
	}
	flags := serveFlags(t, bin)
	port := ""
	for i, w := range df.cmd[1:] {
		if name, ok := strings.CutPrefix(w, "--"); ok && !flags[name] {
			t.Errorf("CMD: 3gs serve has no flag %s", w)
		}
		if w == "--http" && i+2 < len(df.cmd) {
			_, port, _ = strings.Cut(df.cmd[i+2], ":")
		}
	}
	if port == "" || !slices.Contains(df.expose, port) {
		t.Errorf("CMD %v serves on port %q; EXPOSE %v", df.cmd, port, df.expose)
	}

	// compose.yaml agrees with the image and with serve.
	if !slices.Contains(svc.Ports, "127.0.0.1:8080:"+port) {
		t.Errorf("ports %v: want 127.0.0.1:8080:%s, the image's port published on loopback only", svc.Ports, port)
	}
	mount := ""
	for _, v := range svc.Volumes {
		name, target, _ := strings.Cut(v, ":")
		if _, ok := compose.Volumes[name]; ok && slices.Contains(df.volumes, target) {
			mount = target
		}
	}
	if mount == "" {
		t.Fatalf("volumes %v: none is a named volume mounted on the image's VOLUME %v", svc.Volumes, df.volumes)
	}
	help, _ := exec.Command(bin, "serve", "--help").CombinedOutput()
	for k, v := range svc.Environment {
		if !strings.Contains(string(help), "(env "+k+";") {
			t.Errorf("environment: %s is not a variable 3gs serve reads", k)
		}
		if strings.HasPrefix(v, "/") && !strings.HasPrefix(v, mount+"/") {
			t.Errorf("environment: %s=%s is outside the volume %s, so it does not outlive the container", k, v, mount)
		}
	}
	for _, k := range []string{"REGISTRY_PATH", "THREEGS_KEY_FILE", "THREEGS_TOKENS"} {
		if svc.Environment[k] == "" {
			t.Errorf("environment: no %s; the node needs its registry, its key (to sign again before the signature expires) and its tokens", k)
		}
	}

	// The recipe, with a folder for the volume.
	tmp := t.TempDir()
	volume := filepath.Join(tmp, "data")
	if err := os.Mkdir(volume, 0o700); err != nil {
		t.Fatal(err)
	}
	inVolume := func(s string) string {
		if s == mount || strings.HasPrefix(s, mount+"/") {
			return volume + strings.TrimPrefix(s, mount)
		}
		return s
	}
	environ := []string{}
	for k, v := range df.env {
		environ = append(environ, k+"="+inVolume(v))
	}
	for k, v := range svc.Environment {
		environ = append(environ, k+"="+inVolume(v))
	}
	prefix := "docker compose -f deploy/compose.yaml "
	var ran []string
	started := false
	for _, block := range docShellBlocks(t, "## Run it in a container") {
		for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
			w := testkit.ShellWords(line)
			switch {
			case strings.HasPrefix(line, prefix+"build"):
				buildImage(t)
			case strings.HasPrefix(line, prefix+"run --rm 3gs "):
				args := w[len(strings.Fields(prefix+"run --rm 3gs")):]
				for i := range args {
					args[i] = inVolume(args[i])
				}
				cmd := exec.Command(bin, args...)
				cmd.Dir, cmd.Env = inVolume(df.workdir), append(os.Environ(), environ...)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s\n(3gs %s): %v\n%s", line, strings.Join(args, " "), err, out)
				}
				ran = append(ran, args[0])
			case line == prefix+"up -d":
				args := slices.Clone(df.cmd)
				for i := range args {
					if args[i] == "--http" {
						args[i+1] = "127.0.0.1:0" // loopback only, in the test
					}
				}
				env, _ := exec.LookPath("env")
				p := testkit.Start(t, tmp, "3gs", env, append(append(environ, bin), args...)...)
				backend := p.WaitLog(t, regexp.MustCompile(`"msg":"serving MCP over HTTP","url":"http://([^"/]+)/mcp"`), 0, 30*time.Second)[1]
				var h struct {
					Status   string `json:"status"`
					Registry struct {
						Version  string `json:"version"`
						Verified bool   `json:"verified"`
					} `json:"registry"`
				}
				testkit.WaitFor(t, "/health of the image's command", 20*time.Second, func() bool {
					status, _, err := getJSON(http.DefaultClient, "http://"+backend+"/health", &h)
					return err == nil && status == http.StatusOK && h.Status == "ok"
				})
				if !h.Registry.Verified || h.Registry.Version != "0.1.0" {
					t.Errorf("/health: %+v, want the node init made, verified", h)
				}
				log, _ := os.ReadFile(p.Log)
				if !strings.Contains(string(log), `"msg":"curator key loaded"`) || !strings.Contains(string(log), `"msg":"tokens loaded"`) {
					t.Errorf("the server did not load the key and tokens from the volume:\n%s", log)
				}
				started = true
			case strings.HasPrefix(line, "curl -fsS http://127.0.0.1:8080/health"):
				// Asked above, of the port the test gave the server.
			default:
				t.Errorf("a line the test does not know how to run: %s", line)
			}
		}
	}
	if !slices.Equal(ran, []string{"init", "token"}) || !started {
		t.Errorf("the recipe ran %v and started the server: %v; want init, token new, then up", ran, started)
	}
}

// buildImage builds the image with docker compose where a daemon answers;
// elsewhere it says why not and goes on.
func buildImage(t *testing.T) {
	t.Helper()
	docker, err := exec.LookPath("docker")
	if err != nil {
		t.Log("not built: docker is not installed; the compose file and Dockerfile were checked, and the steps run with the binary")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, docker, "info").CombinedOutput(); err != nil {
		t.Logf("not built: no Docker daemon answers (%s); the compose file and Dockerfile were checked, and the steps run with the binary", lastLine(out, err))
		return
	}
	if out, err := exec.CommandContext(ctx, docker, "compose", "version").CombinedOutput(); err != nil {
		t.Logf("not built: docker has no compose plugin (%s)", lastLine(out, err))
		return
	}
	cmd := exec.CommandContext(ctx, docker, "compose", "-f", "deploy/compose.yaml", "config", "--quiet")
	cmd.Dir = testkit.Root()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("docker compose config: %v\n%s", err, out)
	}
	t.Log("docker compose config accepts the file; the image is not built by the test, which would fetch the golang image from a registry")
}

// lastLine is the last line a command wrote, where its error usually is.
func lastLine(out []byte, err error) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return err.Error()
}
