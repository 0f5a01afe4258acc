package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/gen/gentest"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/frozen"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/testkit"
)

// expiringRegistry is our registry re-keyed to a new key and signed at
// signedAt with a signature that expires at expires, written into dir,
// served by handlers whose clock is *clock and which enforce expiry as
// 3gs serve does for a registry file or a replica's copy.
func expiringRegistry(t *testing.T, dir string, signedAt, expires time.Time, clock *atomic.Int64) (*Handlers, string, func(time.Time, time.Time) []byte) {
	t.Helper()
	key, err := curatorkey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	data := testkit.WithCurator(frozen.Registry(frozen.Basic), curatorkey.URI(curatorkey.Public(key)))
	sign := func(at, exp time.Time) []byte {
		return signature.SignWith(data, key, at, signature.Options{Expires: exp})
	}
	doc := sign(signedAt, expires)
	regPath := filepath.Join(dir, "registry.json")
	if err := os.WriteFile(regPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(regPath+".sig", doc, 0o644); err != nil {
		t.Fatal(err)
	}
	h, _ := serving(t, data, doc, Config{
		Origin:        "http://127.0.0.1:1",
		Files:         signature.Files{Registry: regPath, Signature: regPath + ".sig", Where: "test"},
		EnforceExpiry: true,
		Now:           func() time.Time { return time.Unix(0, clock.Load()) },
	})
	return h, regPath, sign
}

// A registry whose signature expires while it is served (a replica whose
// origin is down) is withheld from that moment: every tool that answers
// from it refuses with a tool error naming the date and the fix,
// get_provenance and Published say expired and not verified, and a fresh
// signature serves it again. Nothing was fetched or swapped in between:
// only the clock moved.
func TestExpiredRegistryIsWithheld(t *testing.T) {
	signedAt := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	expires := signedAt.Add(2 * time.Hour)
	var clock atomic.Int64
	clock.Store(signedAt.Add(time.Hour).UnixNano())
	h, _, sign := expiringRegistry(t, t.TempDir(), signedAt, expires, &clock)
	ctx := context.Background()

	calls := []struct{ tool, args string }{
		{gen.ToolGetSources, `{"query":"learn rust"}`},
		{gen.ToolGetSources, `{"slug":"rust-learning"}`},
		{gen.ToolListCategories, `{}`},
		{gen.ToolExplainMatch, `{"query":"learn rust"}`},
		{gen.ToolGetFederatedSources, `{"query":"learn rust"}`},
		{gen.ToolGetEndorsements, `{}`},
	}
	// In force: every call answers.
	for _, c := range calls {
		if _, err := gen.LookupTool(c.tool).Call(ctx, h, []byte(c.args)); err != nil {
			t.Fatalf("in force: %s %s: %v", c.tool, c.args, err)
		}
	}
	if out := provenance(t, h); !out.Verified || out.Expired != nil || out.Expires == nil || !out.Expires.Equal(time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("in force: provenance %+v", out)
	}

	// The moment it expires.
	clock.Store(expires.UnixNano())
	for _, c := range calls {
		_, err := gen.LookupTool(c.tool).Call(ctx, h, []byte(c.args))
		var te *gen.ToolError
		if !errors.As(err, &te) {
			t.Fatalf("expired: %s %s answered (%v), want a tool error", c.tool, c.args, err)
		}
		for _, want := range []string{"signature expired at 2026-11-20T12:00:00Z", "read replica of http://127.0.0.1:1", "3gs sign"} {
			if !strings.Contains(te.Text, want) {
				t.Errorf("expired: %s: %q does not say %q", c.tool, te.Text, want)
			}
		}
		structured, _ := json.Marshal(te.Structured)
		if _, err := gentest.DecodeOutput(c.tool, structured); err != nil {
			t.Errorf("expired: %s: %s breaks the output schema: %v", c.tool, structured, err)
		}
		if bytes.Contains(structured, []byte("rust-learning")) {
			t.Errorf("expired: %s still answers from the registry: %s", c.tool, structured)
		}
	}
	out := provenance(t, h)
	if out.Verified || out.Expired == nil || !*out.Expired || out.Expires == nil || !strings.HasPrefix(out.SignatureDetail, "EXPIRED:") || !strings.Contains(out.SignatureDetail, "3gs sign") {
		t.Errorf("expired: provenance %+v", out)
	}
	if text := h.GetProvenanceText(out); !strings.Contains(text, "Signature: EXPIRED, not verified") {
		t.Errorf("expired: provenance text:\n%s", text)
	}
	if p := h.Published(); p.Signature.Verified || !p.Signature.Expired {
		t.Errorf("expired: published %+v", p.Signature)
	}
	// A server of a registry file (no origin) says how to renew it there.
	h.origin = ""
	if _, err := h.GetSources(ctx, &gen.GetSourcesInput{Query: ptr("learn rust")}); err == nil || !strings.Contains(err.Error(), "the curator sign the registry again (3gs sign) and reloads it (reload_registry or a restart); --allow-expired serves it anyway") {
		t.Errorf("expired, registry file: %v", err)
	}
	h.origin = "http://127.0.0.1:1"

	// A fresh signature for the same bytes serves again.
	now := expires.Add(time.Minute)
	clock.Store(now.UnixNano())
	cur := h.cur.Load()
	h.Serve(cur.reg, sign(now, now.Add(24*time.Hour)), cur.matcher, now)
	for _, c := range calls {
		if _, err := gen.LookupTool(c.tool).Call(ctx, h, []byte(c.args)); err != nil {
			t.Errorf("renewed: %s %s: %v", c.tool, c.args, err)
		}
	}
	if out := provenance(t, h); !out.Verified || out.Expired != nil {
		t.Errorf("renewed: provenance %+v", out)
	}
}

// Without EnforceExpiry (the registry built into the binary, or
// --allow-expired) an expired signature changes nothing that is served.
func TestExpiryNotEnforced(t *testing.T) {
	signedAt := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	var clock atomic.Int64
	clock.Store(signedAt.Add(48 * time.Hour).UnixNano())
	h, _, _ := expiringRegistry(t, t.TempDir(), signedAt, signedAt.Add(time.Hour), &clock)
	h.expiry = false
	if _, err := h.GetSources(context.Background(), &gen.GetSourcesInput{Query: ptr("learn rust")}); err != nil {
		t.Fatal(err)
	}
	if out := provenance(t, h); !out.Verified || out.Expired != nil {
		t.Errorf("provenance %+v", out)
	}
}

// get_provenance's manual steps compare the signed expiry with the
// current time: followed for an expired signature, they fail at that
// step, in Go and, where the tools are installed, in a real shell, which
// prints EXPIRED and the date.
func TestVerificationStepsCheckExpiry(t *testing.T) {
	signedAt := time.Now().Add(-72 * time.Hour).Truncate(time.Second)
	expires := time.Now().Add(-47 * time.Hour).Truncate(time.Second)
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	dir := t.TempDir()
	h, _, _ := expiringRegistry(t, dir, signedAt, expires, &clock)
	out := provenance(t, h)
	steps := out.Verification.Steps
	last := steps[len(steps)-1]
	if !strings.Contains(last.Run, "fromdateiso8601") || last.Expect != signature.ExpiryInForce {
		t.Fatalf("the last step does not compare the expiry with now: %+v", last)
	}
	err := followSteps(dir, steps)
	var se *stepError
	if !errors.As(err, &se) || se.n != len(steps) || !strings.Contains(err.Error(), "EXPIRED at "+expires.UTC().Format(time.RFC3339)) {
		t.Errorf("following the steps for an expired signature: %v; want a failure at the last step, %d", err, len(steps))
	}
	for _, tool := range []string{"sh", "sha256sum", "jq", "base64", "base32", "tr", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed; the steps were followed in Go", tool)
		}
	}
	err = runShellSteps(dir, steps)
	if !errors.As(err, &se) || se.n != len(steps) || !strings.Contains(err.Error(), "EXPIRED at "+expires.UTC().Format(time.RFC3339)) {
		t.Errorf("the shell steps for an expired signature: %v; want a failure at the last step, %d", err, len(steps))
	}
}

// reload_registry refuses the same bytes with a signature made before the
// one served: it verifies, but would replace a newer, longer-lived
// signature with an older one.
func TestReloadRefusesAnOlderSignature(t *testing.T) {
	key := curatorKey(t)
	h, path := editable(t, key)
	data, _ := os.ReadFile(path)
	held := h.cur.Load().signature.SignedAt
	served := h.cur.Load().signature.Document
	older := signature.SignWith(data, key, held.Add(-time.Hour), signature.Options{Expires: held.Add(24 * time.Hour)})
	os.WriteFile(path+signature.Suffix, older, 0o644)
	_, err := h.ReloadRegistry(admin, &gen.ReloadRegistryInput{})
	if err == nil || !strings.Contains(err.Error(), "Refusing a rollback: the signature of "+path+" was made at "+held.Add(-time.Hour).UTC().Format(time.RFC3339)) {
		t.Fatalf("an older signature for the same bytes: %v", err)
	}
	if !bytes.Equal(h.cur.Load().signature.Document, served) {
		t.Fatal("the older signature replaced the one served")
	}
}

// reload_registry words a refusal whose remedy is a setting of the server
// (curation leaves it to the adapter): an expired signature names serve's
// --allow-expired and its environment twin, and the text still says the
// registry served is unchanged.
func TestReloadOfAnExpiredSignatureNamesServesSetting(t *testing.T) {
	key := curatorKey(t)
	h, path := editable(t, key)
	data, _ := os.ReadFile(path)
	// Other bytes than those served (a higher version), so that it is no
	// rollback but an expired signature that refuses it.
	v := h.cur.Load().reg.Version()
	data = bytes.Replace(data, []byte(`"`+v+`"`), []byte(`"9.0.0"`), 1)
	os.WriteFile(path, data, 0o644)
	signedAt := time.Now().Add(-48 * time.Hour)
	expired := signature.SignWith(data, key, signedAt, signature.Options{Expires: signedAt.Add(24 * time.Hour)})
	os.WriteFile(path+signature.Suffix, expired, 0o644)
	_, err := h.ReloadRegistry(admin, &gen.ReloadRegistryInput{})
	if err == nil || !strings.Contains(err.Error(), "a server started with --allow-expired (THREEGS_ALLOW_EXPIRED) loads it anyway") || !strings.Contains(err.Error(), "The registry served is unchanged") {
		t.Fatalf("an expired signature: %v", err)
	}
}
