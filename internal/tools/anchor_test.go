package tools

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
)

// reloadRefusal writes data (and its signature by key, unless key is nil,
// in which case the signature file is removed) and reloads; it returns
// the refusal's text, or "" when the reload was accepted.
func reloadRefusal(t *testing.T, h *Handlers, path string, data []byte, key ed25519.PrivateKey) string {
	t.Helper()
	os.WriteFile(path, data, 0o644)
	if cur, ok := h.cur.Load().reg.CuratorKey(); key != nil && ok && cur.Equal(curatorkey.Public(key)) && bytes.Contains(data, []byte(curatorkey.URI(cur))) {
		signLikeCLI(t, path, data, key) // the serving curator's own: recorded in the log
	} else if key != nil {
		os.WriteFile(path+signature.Suffix, signature.Sign(data, key, time.Now()), 0o644)
	} else {
		os.Remove(path + signature.Suffix)
	}
	_, err := h.ReloadRegistry(admin, &gen.ReloadRegistryInput{})
	if err == nil {
		return ""
	}
	var te *gen.ToolError
	if !errors.As(err, &te) {
		t.Fatalf("reload: %v", err)
	}
	return te.Text
}

// withVersion and withCurator rewrite one field of a registry document.
func withVersion(data []byte, v string) []byte {
	return bytes.Replace(data, []byte(`"version": "1.1.0"`), []byte(`"version": "`+v+`"`), 1)
}

func withCurator(data []byte, from, to string) []byte {
	return bytes.Replace(data, []byte(from), []byte(to), 1)
}

// A file anyone can write must not change who the curator is, bring back
// an older version, or shed its signature, even under --allow-unsigned:
// each was accepted by reload_registry before.
func TestReloadKeepsTheTrustAnchor(t *testing.T) {
	key, _ := curatorkey.Generate()
	other, _ := curatorkey.Generate()
	for _, anchored := range []bool{true, false} {
		h, path := editable(t, key)
		h.node.Editor().AllowUnsigned = true
		if anchored {
			h.node.Editor().Anchor, h.node.Editor().AnchorFrom = curatorkey.Public(key), "--pubkey"
		} else {
			// No --pubkey: the first verified registry loaded becomes the
			// anchor.
			data, _ := os.ReadFile(path)
			if msg := reloadRefusal(t, h, path, data, key); msg != "" {
				t.Fatalf("reloading the same signed file: %s", msg)
			}
			if !h.node.Editor().Anchor.Equal(curatorkey.Public(key)) {
				t.Fatal("the first verified registry did not become the anchor")
			}
		}
		data, _ := os.ReadFile(path)
		mine := curatorkey.URI(curatorkey.Public(key))
		for _, c := range []struct {
			name string
			data []byte
			key  ed25519.PrivateKey
			want string
		}{
			{"re-keyed: another curator, validly signed by it", withVersion(withCurator(data, mine, curatorkey.URI(curatorkey.Public(other))), "1.2.0"), other, "change of curator key"},
			{"signed by another key in the anchor's name", withVersion(data, "1.2.0"), other, "does not verify"},
			{"signature deleted, key made the placeholder", withVersion(withCurator(data, mine, registry.Placeholder), "1.2.0"), nil, "downgrade to an unsigned registry"},
			{"signature deleted", withVersion(data, "1.2.0"), nil, "downgrade to an unsigned registry"},
			{"an older version its curator signed", withVersion(data, "1.0.0"), key, "rollback"},
		} {
			msg := reloadRefusal(t, h, path, c.data, c.key)
			if !strings.Contains(msg, c.want) || !strings.Contains(msg, "served before stays") {
				t.Errorf("anchored %v, %s: %q, want a refusal naming %q", anchored, c.name, msg, c.want)
			}
			if v := h.cur.Load().reg.Version(); v != "1.1.0" {
				t.Fatalf("%s is served (version %s)", c.name, v)
			}
		}
		if msg := reloadRefusal(t, h, path, withVersion(data, "1.2.0"), key); msg != "" {
			t.Errorf("anchored %v: a newer version the curator signed: %s", anchored, msg)
		}
	}
}
