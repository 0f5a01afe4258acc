package auth

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
)

func TestTokensRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	user, err := Add(path, "alice", gen.TierUser, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	admin, err := Add(path, "root", gen.TierAdmin, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(user, "3gs_") || len(user) != 4+43 || user == admin {
		t.Errorf("tokens %q %q", user, admin)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("tokens file mode %v, want 0600", st.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), user) || !strings.Contains(string(data), Hash(user)) {
		t.Error("the file must hold the token's hash and never the token")
	}
	k, err := LoadKeyring(path)
	if err != nil {
		t.Fatal(err)
	}
	for token, want := range map[string]Caller{
		user:                       {Tier: gen.TierUser, Name: "alice", Presented: true},
		admin:                      {Tier: gen.TierAdmin, Name: "root", Presented: true},
		"":                         {},
		"3gs_nope":                 {Presented: true},
		user + "x":                 {Presented: true},
		strings.ToUpper(user):      {Presented: true},
		strings.Repeat("a", 10000): {Presented: true},
	} {
		if got := k.Identify(token); got != want {
			t.Errorf("Identify(%.20q) = %+v, want %+v", token, got, want)
		}
	}
	if n := k.Count(); n[gen.TierUser] != 1 || n[gen.TierAdmin] != 1 {
		t.Errorf("counts %v", n)
	}
	// Revoked, and picked up on Reload.
	if err := Revoke(path, "alice"); err != nil {
		t.Fatal(err)
	}
	if k.Identify(user).Name != "alice" {
		t.Error("revocation took effect before Reload")
	}
	if err := k.Reload(); err != nil {
		t.Fatal(err)
	}
	if c := k.Identify(user); c.Authenticated() || !c.Presented {
		t.Errorf("revoked token still identifies: %+v", c)
	}
	if err := Revoke(path, "alice"); err == nil || !strings.Contains(err.Error(), `no token named "alice"`) {
		t.Errorf("second revoke: %v", err)
	}
	if _, err := Add(path, "root", gen.TierUser, time.Now()); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("duplicate name: %v", err)
	}
	if _, err := Add(path, "pub", gen.TierPublic, time.Now()); err == nil {
		t.Error("a public token was made")
	}
	if _, err := Add(path, "bad name!", gen.TierUser, time.Now()); err == nil || !strings.Contains(err.Error(), "refusing to write an invalid tokens file") {
		t.Errorf("invalid name: %v", err)
	}
	// A broken file on Reload keeps the tokens in use.
	os.WriteFile(path, []byte(`{"tokens":[{"name":"x"}]}`), 0o600)
	if err := k.Reload(); err == nil || !strings.Contains(err.Error(), "is not a valid tokens file") {
		t.Errorf("broken reload: %v", err)
	}
	if k.Identify(admin).Name != "root" {
		t.Error("a failed reload dropped the tokens in use")
	}
	var nilRing *Keyring
	if c := nilRing.Identify(admin); c.Authenticated() || !c.Presented {
		t.Errorf("no keyring: %+v", c)
	}
}

func TestReadFileRules(t *testing.T) {
	dir := t.TempDir()
	if doc, err := ReadFile(filepath.Join(dir, "missing.json")); err != nil || len(doc.Tokens) != 0 {
		t.Errorf("missing file: %v %v", doc, err)
	}
	h := strings.Repeat("a", 64)
	for content, want := range map[string]string{
		`{"tokens":[{"name":"a","tier":"user","sha256":"` + h + `","created":"2026-11-21T00:00:00Z"},{"name":"a","tier":"admin","sha256":"` + strings.Repeat("b", 64) + `","created":"2026-11-21T00:00:00Z"}]}`: "tokens[1].name: same name as tokens[0]",
		`{"tokens":[{"name":"a","tier":"user","sha256":"` + h + `","created":"2026-11-21T00:00:00Z"},{"name":"b","tier":"admin","sha256":"` + h + `","created":"2026-11-21T00:00:00Z"}]}`:                       "tokens[1].sha256: same token as tokens[0]",
		`{"tokens":[{"name":"a","tier":"public","sha256":"` + h + `","created":"2026-11-21T00:00:00Z"}]}`:                                                                                                       "tokens[0].tier: must be one of user, admin",
		`{"tokens":[],"Tokens":[]}`: "Tokens",
		`not json`:                  "not a valid tokens file",
	} {
		p := filepath.Join(dir, "t.json")
		os.WriteFile(p, []byte(content), 0o600)
		if _, err := ReadFile(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", content, err, want)
		}
	}
}

// Two `3gs token new` at once both land: the file is locked while changed.
func TestConcurrentAdds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := Add(path, "holder-"+string(rune('a'+i)), gen.TierUser, time.Now()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	doc, err := ReadFile(path)
	if err != nil || len(doc.Tokens) != 20 {
		t.Fatalf("%d tokens, %v; want 20", len(doc.Tokens), err)
	}
}

func TestContextCarriers(t *testing.T) {
	ctx := context.Background()
	if _, ok := TransportToken(ctx); ok || CallerFrom(ctx).Authenticated() {
		t.Error("empty context carries something")
	}
	ctx = WithTransportToken(WithCaller(ctx, Caller{Tier: gen.TierAdmin, Name: "root"}), "")
	if tok, ok := TransportToken(ctx); !ok || tok != "" {
		t.Error("an empty transport token must still count as given")
	}
	if CallerFrom(ctx).Name != "root" {
		t.Error("caller lost")
	}
}

// BenchmarkIdentify measures what a token costs a request: one SHA-256 and
// a constant-time comparison with every stored hash (here 100).
func BenchmarkIdentify(b *testing.B) {
	path := filepath.Join(b.TempDir(), "tokens.json")
	var last string
	for i := range 100 {
		tok, err := Add(path, "holder-"+strconv.Itoa(i), gen.TierUser, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		last = tok
	}
	k, err := LoadKeyring(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if !k.Identify(last).Authenticated() {
			b.Fatal("not identified")
		}
	}
}
