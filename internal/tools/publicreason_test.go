package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// Every coarse reason the peer package gives is one the schemas of
// get_endorsements and /health list, and nothing else reaches them: a
// reason that is not one of them (a peer's words, say) falls back to the
// bare status.
func TestPublicReasonsMatchTheSchemas(t *testing.T) {
	enum := func(path string, at ...string) []string {
		data, err := os.ReadFile(filepath.Join(testkit.Root(), path))
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		for _, k := range at {
			v = v.(map[string]any)[k]
		}
		var out []string
		for _, e := range v.([]any) {
			out = append(out, e.(string))
		}
		return out
	}
	ends := enum("schema/tools/get_endorsements.json", "outputSchema", "$defs", "endorsedPeer", "properties", "reason", "enum")
	health := enum("schema/health.schema.json", "properties", "follow", "properties", "reason", "enum")
	if !slices.Equal(health, peer.PublicReasons) {
		t.Errorf("/health follow.reason lists %q, the peer package gives %q", health, peer.PublicReasons)
	}
	for _, r := range peer.PublicReasons {
		if !slices.Contains(ends, r) {
			t.Errorf("get_endorsements' reason does not list %q", r)
		}
	}
	for _, c := range []struct{ status, public, want string }{
		{"refused", peer.RefusedSignature, peer.RefusedSignature},
		{"refused", `algorithm: must be one of ed25519; got "TOPSECRET-VALUE-42"`, "refused"},
		{"unreachable", "dial tcp 127.0.0.1:1: connect: connection refused", "unreachable"},
		{"unreachable", "", "unreachable"},
		{"refused", "", "refused"},
		{"fresh", "", ""},
	} {
		if got := PublicReason(c.status, c.public); got != c.want {
			t.Errorf("PublicReason(%q, %q) = %q, want %q", c.status, c.public, got, c.want)
		}
	}
}
