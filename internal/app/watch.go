package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/tools"
)

// Several servers may serve one registry file (every MCP host that starts
// `3gs serve --registry R` runs its own); one of them holds the lock and
// edits it, the others serve it read-only. watchLoop keeps each of them
// serving what the file holds: it looks at the registry and its signature
// every watchEvery, and when either changed, loads them as reload_registry
// does (a change that does not verify is refused, once, in the log, and
// the registry served before stays).
const watchEvery = 500 * time.Millisecond

// fileMark is what a stat says of a file, enough to see that it changed.
type fileMark struct {
	size  int64
	mtime time.Time
	ino   uint64
	ok    bool
}

func markOf(path string) fileMark {
	fi, err := os.Stat(path)
	if err != nil {
		return fileMark{}
	}
	return fileMark{size: fi.Size(), mtime: fi.ModTime(), ino: inode(fi), ok: true}
}

func watchLoop(ctx context.Context, h *tools.Handlers, path string, log *slog.Logger) {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	reg, sig := markOf(path), markOf(path+signature.Suffix)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r, s := markOf(path), markOf(path+signature.Suffix)
		if r == reg && s == sig {
			continue
		}
		reg, sig = r, s
		if !r.ok {
			continue // being replaced, or gone: the next look tells
		}
		pub := h.Published()
		data, err := safefile.Read(path, int64(pub.Registry.Size())+1<<20, "registry")
		if err == nil && sha(data) == pub.Registry.SHA256() && !signatureChanged(path, pub.Signature.Document) {
			continue // what this server wrote itself, or serves already
		}
		out, err := h.ReloadRegistry(ctx, nil)
		if err != nil {
			log.Warn("the registry file changed, and the change is not served", "registry", path, "why", oneLineError(err))
			continue
		}
		log.Info("the registry file changed; serving it", "registry", path, "version", out.RegistryVersion, "verified", out.Verified)
	}
}

// signatureChanged reports whether the signature file is not the served
// document (nil: none was served).
func signatureChanged(path string, served []byte) bool {
	data, err := safefile.Read(path+signature.Suffix, signature.MaxSize, "signature file")
	if err != nil {
		return served != nil
	}
	return !bytes.Equal(data, served)
}

func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// oneLineError is err's text for a log line or a channel answer: a tool
// error's text, on one line.
func oneLineError(err error) string { return oneLine(err.Error()) }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
