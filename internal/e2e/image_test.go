package e2e

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/testkit"
)

// imageConfig is the part of an image's config (Docker's and OCI's share
// it) that says how to run it.
type imageConfig struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	Config       struct {
		User         string              `json:"User"`
		Entrypoint   []string            `json:"Entrypoint"`
		Cmd          []string            `json:"Cmd"`
		Env          []string            `json:"Env"`
		WorkingDir   string              `json:"WorkingDir"`
		ExposedPorts map[string]struct{} `json:"ExposedPorts"`
		Volumes      map[string]struct{} `json:"Volumes"`
		Labels       map[string]string   `json:"Labels"`
		Healthcheck  *struct {
			Test []string `json:"Test"`
		} `json:"Healthcheck"`
	} `json:"config"`
}

// TestContainerImage builds the image with the release tool (release/,
// snapshot mode, this machine's architecture only), loads the
// docker-loadable tarball as a container runtime would (manifest.json,
// then the layers in order, owners and modes kept) and runs it: its
// entrypoint and command in a chroot of the extracted filesystem, as the
// image's user, with the image's environment and working directory and
// nothing else, only the port moved so that 8080 may be taken. The server
// must answer /health and a tools/call, run as uid 65532, write to the
// /data volume, and pass the image's own health check, run the same way.
//
// No container runtime runs here (podman's crun cannot set its rlimits or
// use the host's hybrid cgroups), so a chroot is the runtime; it needs root.
func TestContainerImage(t *testing.T) {
	testkit.Long(t, "it builds the release image with the release tool and runs the server in it")
	if runtime.GOOS != "linux" {
		t.Skip("the image is a Linux image; running it needs Linux")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root, to extract the image with its owners and to chroot into it as its user; run as root (CI does)")
	}
	root := testkit.Root()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	// The release tool is a module of its own; without its modules (no
	// module cache and no proxy) it cannot build, which outside CI is a
	// skip rather than a failure.
	if out, err := exec.CommandContext(ctx, "go", "-C", filepath.Join(root, "release"), "mod", "download").CombinedOutput(); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("the release tool's modules cannot be downloaded (%v), so the image cannot be built:\n%s", err, out)
		}
		t.Fatalf("go mod download in release/: %v\n%s", err, out)
	}
	dist := t.TempDir()
	started := time.Now()
	build := exec.CommandContext(ctx, "go", "run", "-C", filepath.Join(root, "release"), ".", "-snapshot", "-out", dist, "-platforms", "linux/"+runtime.GOARCH)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("release tool: %v\n%s", err, out)
	}
	t.Logf("image built in %s", time.Since(started).Round(time.Millisecond))

	cfg, rootfs := loadImage(t, filepath.Join(dist, "3gs-image-linux-"+runtime.GOARCH+".tar"))
	c := cfg.Config
	if cfg.OS != "linux" || cfg.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s", cfg.OS, cfg.Architecture)
	}
	if strings.Join(c.Entrypoint, " ") != "/3gs" || strings.Join(c.Cmd, " ") != "serve --http 0.0.0.0:8080" {
		t.Errorf("entrypoint %q, command %q", c.Entrypoint, c.Cmd)
	}
	if _, ok := c.ExposedPorts["8080/tcp"]; !ok {
		t.Errorf("exposed ports %v", c.ExposedPorts)
	}
	if _, ok := c.Volumes["/data"]; !ok {
		t.Errorf("volumes %v", c.Volumes)
	}
	var server struct {
		Name string `json:"name"`
	}
	if data, err := os.ReadFile(filepath.Join(root, "server.json")); err != nil || json.Unmarshal(data, &server) != nil {
		t.Fatalf("server.json: %v", err)
	}
	if got := c.Labels["io.modelcontextprotocol.server.name"]; got != server.Name {
		t.Errorf("label io.modelcontextprotocol.server.name = %q, server.json says %q", got, server.Name)
	}
	if c.Healthcheck == nil || len(c.Healthcheck.Test) < 2 || c.Healthcheck.Test[0] != "CMD" {
		t.Fatalf("health check %+v", c.Healthcheck)
	}
	uid, gid := imageUser(t, c.User)
	if uid == 0 {
		t.Errorf("the image runs as root (User %q)", c.User)
	}
	pool := x509.NewCertPool()
	if pem, err := os.ReadFile(filepath.Join(rootfs, "etc/ssl/certs/ca-certificates.crt")); err != nil || !pool.AppendCertsFromPEM(pem) {
		t.Errorf("no CA certificates for HTTPS peers: %v", err)
	}

	// As the image's user, in the image's filesystem and environment.
	inImage := func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Env = c.Env
		cmd.Dir = c.WorkingDir
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs, Credential: &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}}
		return cmd
	}

	if out, err := inImage(ctx, append(c.Entrypoint, "version")...).Output(); err != nil || !strings.HasPrefix(string(out), "3gs "+c.Labels["org.opencontainers.image.version"]+" ") {
		t.Errorf("3gs version: %q %v; the label says %s", out, err, c.Labels["org.opencontainers.image.version"])
	}

	port := imageFreePort(t)
	args := append(append([]string{}, c.Entrypoint...), c.Cmd...)
	for i, a := range args {
		if i > 0 && args[i-1] == "--http" {
			host, _, err := net.SplitHostPort(a)
			if err != nil {
				t.Fatalf("--http %q: %v", a, err)
			}
			args[i] = net.JoinHostPort(host, port)
		}
	}
	srvCtx, stop := context.WithCancel(ctx)
	defer stop()
	srv := inImage(srvCtx, args...)
	var logs testkit.SyncBuffer
	srv.Stderr = &logs
	srv.Cancel = func() error { return srv.Process.Signal(syscall.SIGTERM) }
	srv.WaitDelay = 15 * time.Second
	if err := srv.Start(); err != nil {
		t.Fatalf("starting %q in the image: %v", args, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	defer func() {
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	}()

	base := "http://127.0.0.1:" + port
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("the server exited before answering /health: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("/health did not answer 200 within 30s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("serving on %s (%s) in %s", base, strings.Join(args, " "), time.Since(started).Round(time.Millisecond))

	// A reverse proxy passes its own Host; bound to 0.0.0.0 without
	// --allow-host, the server answers it.
	req, _ := http.NewRequest(http.MethodGet, base+"/health", nil)
	req.Host = "mcp.example.com"
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("/health with the Host a proxy sends: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	var sources struct {
		Slug    string `json:"slug"`
		Sources []struct {
			URL string `json:"url"`
		} `json:"sources"`
	}
	callTool(t, base+"/mcp", "get_sources", map[string]any{"query": "learn rust ownership"}, &sources)
	if sources.Slug != "rust-learning" || len(sources.Sources) != 3 {
		t.Errorf("get_sources: %+v", sources)
	}

	if ids := procIDs(t, srv.Process.Pid); ids != fmt.Sprintf("uid %d gid %d", uid, gid) {
		t.Errorf("the server runs as %s, the image says %s", ids, c.User)
	}

	// The image's own health check, pointed at the moved port.
	hc := append(append([]string{}, c.Healthcheck.Test[1:]...), "--url", base+"/health")
	if out, err := inImage(ctx, hc...).CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "ok: ") {
		t.Errorf("health check %q: %v\n%s", hc, err, out)
	} else {
		t.Logf("health check: %s", bytes.TrimSpace(out))
	}
	// A health check against a port nothing serves fails.
	if out, err := inImage(ctx, append(append([]string{}, c.Healthcheck.Test[1:]...), "--url", "http://127.0.0.1:"+imageFreePort(t)+"/health", "--timeout", "2s")...).CombinedOutput(); err == nil {
		t.Errorf("health check of a closed port passed:\n%s", out)
	}

	// The volume is the user's: a tokens file can be made there.
	tokens := inImage(ctx, c.Entrypoint[0], "token", "new", "--tokens", "tokens.json", "--tier", "admin", "--name", "image-test")
	if out, err := tokens.CombinedOutput(); err != nil {
		t.Errorf("3gs token new in /data: %v\n%s", err, out)
	} else if fi, err := os.Stat(filepath.Join(rootfs, "data", "tokens.json")); err != nil || fi.Sys().(*syscall.Stat_t).Uid != uid || fi.Mode().Perm() != 0o600 {
		t.Errorf("/data/tokens.json: %v %v", fi, err)
	}

	// docker stop sends SIGTERM: the server drains and exits 0.
	srv.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("the server did not exit within 20s of SIGTERM")
	}
}

// loadImage reads a docker-loadable tarball as `docker load` does and
// unpacks its one image: the config, and the layers in order into a root
// filesystem with the owners and modes they record.
func loadImage(t *testing.T, path string) (imageConfig, string) {
	t.Helper()
	files := map[string][]byte{}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h.Typeflag == tar.TypeReg {
			if files[h.Name], err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil || len(manifest) != 1 {
		t.Fatalf("manifest.json: %v: %s", err, files["manifest.json"])
	}
	m := manifest[0]
	if len(m.RepoTags) != 1 {
		t.Errorf("tags %v", m.RepoTags)
	}
	var cfg imageConfig
	if err := json.Unmarshal(files[m.Config], &cfg); err != nil {
		t.Fatalf("config %s: %v", m.Config, err)
	}
	rootfs := filepath.Join(t.TempDir(), "rootfs")
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range m.Layers {
		data, ok := files[l]
		if !ok {
			t.Fatalf("manifest.json names layer %s, which the tarball lacks", l)
		}
		if err := unpackLayer(rootfs, data); err != nil {
			t.Fatalf("layer %s: %v", l, err)
		}
	}
	return cfg, rootfs
}

// unpackLayer extracts one layer, gzipped or not, into dir. This image has
// directories and regular files only; anything else (a link, a whiteout)
// is an error rather than silently mishandled.
func unpackLayer(dir string, data []byte) error {
	var r io.Reader = bytes.NewReader(data)
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		r = zr
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(filepath.FromSlash(h.Name))
		if !filepath.IsLocal(name) || strings.HasPrefix(filepath.Base(name), ".wh.") {
			return fmt.Errorf("entry %q: not a plain path", h.Name)
		}
		dst := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o700); err != nil {
				return err
			}
		case tar.TypeReg:
			content, err := io.ReadAll(tr)
			if err != nil {
				return err
			}
			if err := os.WriteFile(dst, content, 0o600); err != nil {
				return err
			}
		default:
			return fmt.Errorf("entry %q: type %q not expected in this image", h.Name, h.Typeflag)
		}
		// Owners and the full mode (sticky /tmp included), as recorded;
		// chmod after chown, which clears set-id bits.
		if err := os.Lchown(dst, h.Uid, h.Gid); err != nil {
			return err
		}
		if err := os.Chmod(dst, h.FileInfo().Mode()&(os.ModePerm|os.ModeSticky|os.ModeSetuid|os.ModeSetgid)); err != nil {
			return err
		}
	}
}

// imageUser reads a numeric USER:GROUP, the form that needs no passwd
// lookup and that Kubernetes' runAsNonRoot can check.
func imageUser(t *testing.T, user string) (uint32, uint32) {
	t.Helper()
	u, g, ok := strings.Cut(user, ":")
	uid, err1 := strconv.ParseUint(u, 10, 32)
	gid, err2 := strconv.ParseUint(g, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("image user %q is not numeric UID:GID", user)
	}
	return uint32(uid), uint32(gid)
}

// imageFreePort is a port nothing listens on now, on any address.
func imageFreePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// procIDs is the real user and group of a process, from /proc.
func procIDs(t *testing.T, pid int) string {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ids := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && (k == "Uid" || k == "Gid") {
			if fields := strings.Fields(v); len(fields) > 0 {
				ids[k] = fields[0]
			}
		}
	}
	return "uid " + ids["Uid"] + " gid " + ids["Gid"]
}
