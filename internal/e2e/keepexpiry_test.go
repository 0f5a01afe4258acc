package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/testkit"
	"github.com/three-good-sources/3gs/internal/testkit/curator"
)

// The curator signs for 72 hours (3gs sign --expires 72h) and starts a
// server holding the key with its default --expires (30 days): the server
// keeps the curator's choice. Once /health answers, the signature file is
// the one the curator wrote, byte for byte, and /health reports its
// expiry. Real processes on loopback.
func TestServeKeepsTheCuratorsExpiry(t *testing.T) {
	bin := testkit.Binary(t)
	cur := curator.Signed(t)
	if out, err := exec.Command(bin, "sign", "--expires", "72h", "--key-file", cur.KeyFile, cur.Registry).CombinedOutput(); err != nil {
		t.Fatalf("sign --expires 72h: %v\n%s", err, out)
	}
	sig, err := os.ReadFile(cur.Registry + signature.Suffix)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := signature.Parse(sig)
	if err != nil || doc.Expires == nil || doc.Expires.Sub(doc.SignedAt) != 72*time.Hour {
		t.Fatalf("the curator's signature: %+v %v, want a 72-hour span", doc, err)
	}
	s := testkit.Serve(t, bin, "--registry", cur.Registry, "--key-file", cur.KeyFile)
	base := nodeURL(s.URL)
	testkit.WaitFor(t, "the server's /health saying its registry is verified", time.Minute, func() bool {
		h, err := readHealth(base)
		return err == nil && h.Registry != nil && h.Registry.Verified
	})
	h, _ := readHealth(base)
	if h.Registry.Expires == nil || !h.Registry.Expires.Equal(*doc.Expires) {
		t.Errorf("/health says the signature expires %v, want the curator's %v", h.Registry.Expires, *doc.Expires)
	}
	if now, err := os.ReadFile(cur.Registry + signature.Suffix); err != nil || !bytes.Equal(now, sig) {
		t.Fatalf("the server rewrote the curator's signature (%v):\nwas %s\nnow %s", err, sig, now)
	}
}
