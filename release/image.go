package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// The image is FROM scratch: one layer holding the static binary, the
// files a process expects to find (passwd and group naming its user, CA
// certificates for fetching peers' registries and --follow origins over
// HTTPS, a /tmp) and /data, the volume for a registry, a curator key,
// tokens, caches and logs. Nothing is pulled, so it builds offline and the
// only inputs are the binary, this file and the pinned CA bundle.
//
// The layout mirrors the Dockerfile at the root of the repository.
const (
	imageUser  = 65532 // the "nonroot" user of distroless images, a common convention
	imagePort  = "8080"
	imageBin   = "/3gs"
	imageData  = "/data"
	caCertFile = "etc/ssl/certs/ca-certificates.crt" // where Go (and OpenSSL) look first on Linux
)

// imageConfig is the runtime configuration every platform's image gets.
func imageConfig(st stamp, meta serverMeta) v1.Config {
	return v1.Config{
		User:       fmt.Sprintf("%d:%d", imageUser, imageUser),
		Entrypoint: []string{imageBin},
		// 0.0.0.0 so that a published port reaches the server. With no
		// --allow-host every Host is answered, which is what a plain
		// `docker run -p` and a reverse proxy need; a deployment that is
		// reached by a name sets THREEGS_ALLOW_HOST to it (the health
		// check follows: it sends that name as Host).
		Cmd: []string{"serve", "--http", "0.0.0.0:" + imagePort},
		Env: []string{
			// Whatever 3gs keeps in the user's cache directory goes into
			// the volume: the last verified copies of peers' registries
			// and of a --follow origin's, so that a new container starts
			// from them. (Not THREEGS_FOLLOW_CACHE: serve refuses it
			// without --follow.)
			"HOME=" + imageData,
			"THREEGS_PEER_CACHE=" + imageData + "/peers",
		},
		WorkingDir:   imageData,
		ExposedPorts: map[string]struct{}{imagePort + "/tcp": {}},
		Volumes:      map[string]struct{}{imageData: {}},
		StopSignal:   "SIGTERM", // serve drains requests in flight on SIGTERM
		// Docker's HEALTHCHECK; the OCI image spec has no such field and
		// Podman reads it from Docker-format images only. Kubernetes
		// ignores it: point a probe at /health there.
		Healthcheck: &v1.HealthConfig{
			Test:        []string{"CMD", imageBin, "health"},
			Interval:    30 * time.Second,
			Timeout:     5 * time.Second,
			StartPeriod: 10 * time.Second,
			Retries:     3,
		},
		Labels: map[string]string{
			"org.opencontainers.image.title":       "3gs",
			"org.opencontainers.image.description": meta.Description,
			"org.opencontainers.image.source":      meta.Repository.URL,
			"org.opencontainers.image.url":         meta.WebsiteURL,
			"org.opencontainers.image.version":     st.version,
			"org.opencontainers.image.revision":    st.commit,
			"org.opencontainers.image.created":     st.date.Format(time.RFC3339),
			"org.opencontainers.image.licenses":    meta.Meta.Publisher.License,
			// The MCP Registry checks that an OCI package's image carries
			// the server's name in this label.
			"io.modelcontextprotocol.server.name": meta.Name,
		},
	}
}

type imageBinary struct {
	arch string // GOARCH
	path string
}

// imageTag is the version as an image tag, which may not contain "+".
func imageTag(version string) string {
	return strings.ReplaceAll(strings.TrimPrefix(version, "v"), "+", "-")
}

func imageTarName(arch string) string { return "3gs-image-linux-" + arch + ".tar" }

const ociArchiveName = "3gs-image-oci.tar"

// writeImages writes a docker-loadable tarball per architecture (`docker
// load` takes one platform at a time) and one OCI archive whose index
// holds them all, for pushing as a multi-platform image.
func writeImages(out, repo string, bins []imageBinary, st stamp, meta serverMeta) error {
	ref, err := name.NewTag(repo + ":" + imageTag(st.version))
	if err != nil {
		return fmt.Errorf("-image-repo %q: %v", repo, err)
	}
	certs, err := caCertificates()
	if err != nil {
		return err
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, b := range bins {
		data, err := os.ReadFile(b.path)
		if err != nil {
			return err
		}
		img, err := buildImage(data, certs, b.arch, st, meta)
		if err != nil {
			return fmt.Errorf("image for linux/%s: %v", b.arch, err)
		}
		if err := tarball.WriteToFile(filepath.Join(out, imageTarName(b.arch)), ref, img); err != nil {
			return err
		}
		d, err := img.Digest()
		if err != nil {
			return err
		}
		logf("image %s linux/%s: %s", ref, b.arch, d)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: platform(b.arch)}})
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	logf("image index %s: %s", ref, d)
	return writeOCIArchive(filepath.Join(out, ociArchiveName), idx, ref, st.date)
}

func platform(arch string) *v1.Platform {
	p := &v1.Platform{OS: "linux", Architecture: arch}
	if arch == "arm64" {
		p.Variant = "v8" // as Docker and the registries name it
	}
	return p
}

func buildImage(bin, certs []byte, arch string, st stamp, meta serverMeta) (v1.Image, error) {
	layerTar, err := rootfs(bin, certs, st.date)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.BestCompression))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	created := v1.Time{Time: st.date}
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
		Created:   created,
		CreatedBy: "3gs release: /3gs, /etc/passwd, /etc/group, CA certificates, /data, /tmp",
		Comment:   "built by release/ in " + mainModule,
	}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	p := platform(arch)
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = created
	cf.Config = imageConfig(st, meta)
	return mutate.ConfigFile(img, cf)
}

// rootfs is the image's one layer, an uncompressed tar. Every entry has
// the same time (the source's date) and numeric owners, so the layer, and
// with it every digest, is a function of the inputs alone.
func rootfs(bin, certs []byte, date time.Time) ([]byte, error) {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:%s:/sbin/nologin\n", imageUser, imageUser, imageData)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", imageUser)
	type entry struct {
		name     string
		mode     int64
		uid      int
		contents []byte // nil for a directory
	}
	entries := []entry{
		{name: "3gs", mode: 0o755, contents: bin},
		// The volume: the server's user owns it and nobody else may look
		// in, since it holds the curator key and the tokens file.
		{name: "data/", mode: 0o700, uid: imageUser},
		{name: "etc/", mode: 0o755},
		{name: "etc/group", mode: 0o644, contents: []byte(group)},
		{name: "etc/passwd", mode: 0o644, contents: []byte(passwd)},
		{name: "etc/ssl/", mode: 0o755},
		{name: "etc/ssl/certs/", mode: 0o755},
		{name: caCertFile, mode: 0o644, contents: certs},
		{name: "tmp/", mode: 0o1777},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: date, Format: tar.FormatPAX}
		if e.contents == nil {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.contents))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.contents); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// caCertificates is a PEM bundle of the roots Go's
// golang.org/x/crypto/x509roots/fallback carries (Mozilla's NSS store, at
// the version release/go.mod pins, so the bundle is reproducible, unlike a
// copy of the build machine's). A root with a constraint (distrusted for
// certificates issued after a date) is left out: PEM cannot carry the
// constraint, and leaving it out fails closed.
func caCertificates() ([]byte, error) {
	var buf bytes.Buffer
	n := 0
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		if err := pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate}); err != nil {
			return nil, err
		}
		n++
	}
	if n < 50 {
		return nil, fmt.Errorf("only %d CA certificates in the fallback bundle", n)
	}
	return buf.Bytes(), nil
}

// writeOCIArchive writes the index as an OCI image layout, packed in a tar
// (what `docker buildx build --output type=oci` makes, and what `skopeo
// copy oci-archive:...` and `podman load` read). The index.json names the
// multi-platform index by its reference.
func writeOCIArchive(path string, idx v1.ImageIndex, ref name.Tag, date time.Time) error {
	dir, err := os.MkdirTemp("", "3gs-oci-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	// The full reference, not the tag alone: podman load names the image
	// after ref.name, and skopeo matches oci-archive:FILE:REF against it.
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": ref.Name(),
		"io.containerd.image.name":          ref.Name(),
	})); err != nil {
		return err
	}
	return tarDir(path, dir, date)
}

// tarDir packs dir into a tar at path, entries sorted, with fixed times,
// modes and owners, so equal contents give equal bytes.
func tarDir(path, dir string, date time.Time) error {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			rel += "/"
		}
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(names)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	for _, n := range names {
		h := &tar.Header{Name: n, ModTime: date, Format: tar.FormatPAX}
		var data []byte
		if strings.HasSuffix(n, "/") {
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		} else {
			if data, err = os.ReadFile(filepath.Join(dir, filepath.FromSlash(n))); err != nil {
				f.Close()
				return err
			}
			h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, int64(len(data))
		}
		if err := tw.WriteHeader(h); err != nil {
			f.Close()
			return err
		}
		if _, err := tw.Write(data); err != nil {
			f.Close()
			return err
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
