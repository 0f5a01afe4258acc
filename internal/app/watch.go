package app

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
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

// The sign channel: `3gs sign R` cannot write while a server holds R's
// lock, so it asks that server, over a Unix socket beside the registry
// (R.sock, mode 0600: only the server's own user reaches it, the user
// who could read its key anyway), to record, sign and serve the
// curator's hand edit (tools.Handlers.SignHandEdit). One request line,
// "sign", and one answer line, "OK text" or "FAIL text".
func SignSocket(regPath string) string { return regPath + ".sock" }

// maxSocketPath is the longest socket path every Unix takes (sun_path).
const maxSocketPath = 100

// serveSignChannel answers sign requests until ctx ends, then removes the
// socket. A path too long for a socket, or one that is taken by anything
// but a stale socket, leaves the channel closed, with a warning: sign then
// says to stop the server.
func serveSignChannel(ctx context.Context, h *tools.Handlers, regPath string, log *slog.Logger) {
	path := SignSocket(regPath)
	if len(path) > maxSocketPath {
		log.Warn("no local sign channel: the registry's path is too long for a Unix socket beside it; 3gs sign needs this server stopped", "socket", path)
		return
	}
	// This server holds the registry's lock, so a socket left there is a
	// crashed server's; anything else is not ours to remove.
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket || !ownedByUs(fi) {
			log.Warn("no local sign channel: something that is not this user's socket is in its place; 3gs sign needs this server stopped", "socket", path)
			return
		}
		if err := os.Remove(path); err != nil {
			log.Warn("no local sign channel: cannot remove a socket left by an earlier server", "socket", path, "err", err)
			return
		}
	}
	// The socket is made in a directory only this user can enter, made
	// private there, and only then moved beside the registry: no one else
	// can connect in the moment between its creation and its chmod.
	dir, err := os.MkdirTemp(filepath.Dir(path), ".3gs-sign-")
	if err != nil {
		log.Warn("no local sign channel; 3gs sign needs this server stopped", "socket", path, "err", err)
		return
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "s")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		log.Warn("no local sign channel; 3gs sign needs this server stopped", "socket", path, "err", err)
		return
	}
	l.SetUnlinkOnClose(false)
	defer l.Close()
	if err := os.Chmod(tmp, 0o600); err != nil {
		log.Warn("no local sign channel: cannot make its socket private", "socket", path, "err", err)
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		log.Warn("no local sign channel; 3gs sign needs this server stopped", "socket", path, "err", err)
		return
	}
	defer os.Remove(path)
	go func() { <-ctx.Done(); l.Close() }()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// A passing failure (too many open files) must not end the
			// channel for good.
			log.Warn("the local sign channel could not accept a connection; it keeps listening", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		answerSign(ctx, h, c, log)
	}
}

// answerSign serves one connection: one request, one answer, within
// signTimeout.
func answerSign(ctx context.Context, h *tools.Handlers, c net.Conn, log *slog.Logger) {
	defer c.Close()
	if !peerIsUs(c) {
		fmt.Fprintln(c, "FAIL only the user this server runs as may ask it to sign")
		return
	}
	// The request line comes at once or not at all: a client that sends
	// nothing holds the channel, and the server's shutdown, for moments.
	c.SetDeadline(time.Now().Add(requestTimeout))
	line, err := bufio.NewReader(&limitedConn{c, 64}).ReadString('\n')
	c.SetDeadline(time.Now().Add(signTimeout))
	if err != nil || strings.TrimSpace(line) != "sign" {
		fmt.Fprintln(c, "FAIL not a sign request")
		return
	}
	out, err := h.SignHandEdit(ctx)
	if err != nil {
		fmt.Fprintln(c, "FAIL "+oneLineError(err))
		return
	}
	log.Info("signed and serving the curator's edit, as 3gs sign asked", "version", out.RegistryVersion, "sha256", out.RegistrySHA256)
	fmt.Fprintln(c, "OK "+oneLine(h.ReloadRegistryText(out)))
}

// signTimeout bounds one sign request, both ways; requestTimeout the
// wait for its request line.
const (
	signTimeout    = 30 * time.Second
	requestTimeout = 5 * time.Second
)

// limitedConn reads at most n bytes of a connection.
type limitedConn struct {
	c net.Conn
	n int
}

func (l *limitedConn) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("request too long")
	}
	p = p[:min(len(p), l.n)]
	n, err := l.c.Read(p)
	l.n -= n
	return n, err
}

// AskToSign is sign's side: it reports whether a server answered,
// and what.
func AskToSign(regPath string) (answered, ok bool, text string) {
	// Only a socket of this user's is a server of this user's: another
	// user's socket there could answer OK with nothing signed.
	if fi, err := os.Lstat(SignSocket(regPath)); err != nil || fi.Mode().Type() != fs.ModeSocket || !ownedByUs(fi) {
		return false, false, ""
	}
	c, err := net.DialTimeout("unix", SignSocket(regPath), 5*time.Second)
	if err != nil {
		return false, false, ""
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(signTimeout))
	if _, err := fmt.Fprintln(c, "sign"); err != nil {
		return false, false, ""
	}
	line, err := bufio.NewReader(&limitedConn{c, 1 << 16}).ReadString('\n')
	if err != nil && line == "" {
		return true, false, "the server did not answer: " + err.Error()
	}
	status, text, _ := strings.Cut(strings.TrimSpace(line), " ")
	return true, status == "OK", text
}
