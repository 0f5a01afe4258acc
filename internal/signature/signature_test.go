package signature

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
)

func key(t testing.TB, seedHex string) ed25519.PrivateKey {
	t.Helper()
	k, err := curatorkey.ParseSeed(seedHex)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var (
	seedA = strings.Repeat("a1", 32)
	seedB = strings.Repeat("b2", 32)
	when  = time.Date(2026, 11, 21, 9, 30, 0, 0, time.FixedZone("CET", 3600))
)

// registryFor is a minimal valid registry whose curator is key's owner.
func registryFor(key ed25519.PrivateKey) []byte {
	pub := registry.Placeholder
	if key != nil {
		pub = curatorkey.URI(curatorkey.Public(key))
	}
	return []byte(`{"version":"1.0.0","updated":"2026-11-21","curator":{"name":"Test Curator","pubkey":"` + pub + `"},"endorsements":[],` +
		`"categories":{"go":{"name":"Go","description":"D","query_patterns":["learn go","go tutorial","go modules"],"sources":[` +
		`{"rank":1,"name":"A","url":"https://a.example/","type":"tool","why":"W"},` +
		`{"rank":2,"name":"B","url":"https://b.example/","type":"book","why":"W"},` +
		`{"rank":3,"name":"C","url":"https://c.example/","type":"repo","why":"W"}]}}}` + "\n")
}

func TestSignVerifyRoundTrip(t *testing.T) {
	k := key(t, seedA)
	data := registryFor(k)
	doc := Sign(data, k, when)
	var fields map[string]string
	if err := json.Unmarshal(doc, &fields); err != nil {
		t.Fatal(err)
	}
	if fields["algorithm"] != "ed25519" || fields["pubkey"] != curatorkey.Encode(curatorkey.Public(k)) || fields["signed_at"] != "2026-11-21T08:30:00Z" ||
		fields["expires"] != "2026-12-21T08:30:00Z" || len(fields) != 6 {
		t.Errorf("document %s", doc)
	}
	if _, err := Parse(doc); err != nil {
		t.Fatalf("Sign's output does not pass its own schema: %v", err)
	}
	for _, trusted := range []ed25519.PublicKey{nil, curatorkey.Public(k)} {
		v, err := Verify(data, doc, trusted)
		if err != nil {
			t.Fatal(err)
		}
		if !v.Signer.Equal(curatorkey.Public(k)) || !v.SignedAt.Equal(time.Date(2026, 11, 21, 8, 30, 0, 0, time.UTC)) || len(v.SHA256) != 64 {
			t.Errorf("verified %+v", v)
		}
	}
	// Ed25519 is deterministic: the same bytes and key sign the same way.
	if !bytes.Equal(doc, Sign(data, k, when)) {
		t.Error("two signatures of the same bytes differ")
	}
}

func TestVerifyFailures(t *testing.T) {
	k := key(t, seedA)
	data := registryFor(k)
	doc := Sign(data, k, when)
	var fields map[string]string
	json.Unmarshal(doc, &fields)
	with := func(name, value string) []byte {
		m := map[string]string{}
		for k, v := range fields {
			m[k] = v
		}
		m[name] = value
		b, _ := json.Marshal(m)
		return b
	}
	changed := bytes.Replace(data, []byte(`"A"`), []byte(`"a"`), 1)
	otherSig := Sign(data, key(t, seedB), when)
	cases := []struct {
		name    string
		data    []byte
		doc     []byte
		trusted ed25519.PublicKey
		is      error
		says    string
	}{
		{"one byte changed", changed, doc, nil, ErrDigest, "the registry's SHA-256 is "},
		{"different trusted key", data, doc, curatorkey.Public(key(t, seedB)), ErrWrongKey, "not by the expected " + curatorkey.Encode(curatorkey.Public(key(t, seedB)))},
		{"signed by another key", data, otherSig, curatorkey.Public(k), ErrWrongKey, "the signature is by " + curatorkey.Encode(curatorkey.Public(key(t, seedB)))},
		{"truncated", data, doc[:len(doc)/2], nil, ErrMalformed, "malformed signature file"},
		{"not JSON", data, []byte("-----BEGIN SIGNATURE-----\n"), nil, ErrMalformed, "malformed signature file"},
		{"empty", data, []byte("\n"), nil, ErrMalformed, "the file is empty"},
		{"unknown field", data, with("comment", "x"), nil, ErrMalformed, "comment: unknown field"},
		{"case-variant field", data, bytes.Replace(doc, []byte(`"pubkey"`), []byte(`"PubKey"`), 1), nil, ErrMalformed, "PubKey"},
		{"other algorithm", data, with("algorithm", "rsa"), nil, ErrMalformed, "algorithm"},
		{"signature bytes altered", data, with("signature", strings.Repeat("A", 86)+"=="), nil, ErrBadSignature, "the signature file was altered"},
		{"signature too short", data, with("signature", "AAAA"), nil, ErrMalformed, "signature"},
		{"pubkey off the curve", data, with("pubkey", "ye"+strings.Repeat("y", 50)), nil, ErrMalformed, "not a point on the curve"},
		{"digest field edited to match other bytes", changed, with("signed_sha256", sha(changed)), nil, ErrBadSignature, "not valid"},
		{"oversized", data, bytes.Repeat([]byte(" "), MaxSize+1), nil, ErrMalformed, "more than the"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Verify(c.data, c.doc, c.trusted)
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("got %v, want %v saying %q", err, c.is, c.says)
			}
		})
	}
	// The digest error names both digests.
	_, err := Verify(changed, doc, nil)
	if !strings.Contains(err.Error(), sha(changed)) || !strings.Contains(err.Error(), sha(data)) {
		t.Errorf("digest error does not name both digests: %v", err)
	}
}

func sha(b []byte) string {
	r, err := registry.Load(b)
	if err != nil {
		panic(err)
	}
	return r.SHA256()
}

func TestCheck(t *testing.T) {
	k := key(t, seedA)
	load := func(data []byte) *registry.Registry {
		r, err := registry.Load(data)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	reg := load(registryFor(k))
	if st := Check(reg, nil); st.Signed() || st.Verified || st.Problem != nil {
		t.Errorf("no document: %+v", st)
	}
	st := Check(reg, Sign(reg.Bytes(), k, when))
	if !st.Signed() || !st.Verified || st.Problem != nil || !st.Signer.Equal(curatorkey.Public(k)) || st.SignedAt.IsZero() {
		t.Errorf("good document: %+v", st)
	}
	// Signed correctly, but by someone who is not the curator.
	st = Check(reg, Sign(reg.Bytes(), key(t, seedB), when))
	if st.Verified || !errors.Is(st.Problem, ErrNotCurator) || !strings.Contains(st.Problem.Error(), "but curator.pubkey in the registry is") {
		t.Errorf("other signer: %+v", st)
	}
	// A placeholder curator cannot have a valid signature.
	ph := load(registryFor(nil))
	st = Check(ph, Sign(ph.Bytes(), k, when))
	if st.Verified || !errors.Is(st.Problem, ErrNotCurator) || !strings.Contains(st.Problem.Error(), curatorkey.URI(curatorkey.Public(k))) {
		t.Errorf("placeholder curator: %+v", st)
	}
	// A stale document: read, but not verified.
	st = Check(load(bytes.Replace(reg.Bytes(), []byte(`"A"`), []byte(`"a"`), 1)), Sign(reg.Bytes(), k, when))
	if !st.Signed() || st.Verified || !errors.Is(st.Problem, ErrDigest) || st.Signer == nil {
		t.Errorf("stale document: %+v", st)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"registry.json":          "registry.json",
		"/srv/3gs/registry.json": "/srv/3gs/registry.json",
		"my registry.json":       "'my registry.json'",
		"it's.json":              `'it'\''s.json'`,
		"$(rm -rf ~).json":       "'$(rm -rf ~).json'",
		"":                       "''",
	} {
		got := ShellQuote(in)
		if got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
		if _, err := exec.LookPath("sh"); err == nil {
			out, err := exec.Command("sh", "-c", "printf %s "+got).Output()
			if err != nil || string(out) != in {
				t.Errorf("sh reads %s as %q (%v), want %q", got, out, err, in)
			}
		}
	}
}

// Whatever the signature file holds, Verify answers without panicking, and
// it accepts only a signature the signer's key really made over the bytes.
func FuzzVerify(f *testing.F) {
	k, _ := curatorkey.ParseSeed(seedA)
	data := registryFor(k)
	good := Sign(data, k, when)
	f.Add(good)
	f.Add(SignWith(data, k, when, Options{}))
	f.Add(SignWith(data, k, when, Options{Expires: when.Add(time.Hour), Log: &auditlog.Head{Seq: 3, Hash: strings.Repeat("ab", 32)}}))
	f.Add(good[:len(good)/2])
	f.Add([]byte(`{"algorithm":"ed25519"}`))
	f.Add([]byte("\xff\xfe{"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		v, err := Verify(data, doc, nil)
		if err != nil {
			for _, kind := range []error{ErrMalformed, ErrDigest, ErrWrongKey, ErrBadSignature} {
				if errors.Is(err, kind) {
					return
				}
			}
			t.Fatalf("error of no known kind: %v", err)
		}
		sig, perr := Parse(doc)
		if perr != nil {
			t.Fatalf("verified a document that does not parse: %v", perr)
		}
		raw, _ := base64.StdEncoding.DecodeString(sig.Signature)
		msg := data
		if sig.Expires != nil {
			msg = Statement(sig)
		}
		if !ed25519.Verify(v.Signer, msg, raw) {
			t.Fatal("Verify accepted a signature that does not verify")
		}
	})
}

// BenchmarkVerify measures what start-up adds to load a signed registry:
// parse the document, hash the bytes, verify Ed25519, over our embedded
// registry.
func BenchmarkVerify(b *testing.B) {
	data, doc := threegs.DefaultRegistry, threegs.DefaultSignature
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Verify(data, doc, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSign(b *testing.B) {
	k := key(b, seedA)
	data := threegs.DefaultRegistry
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		Sign(data, k, when)
	}
}

// The expiry and the log head are signed: changing either in the document
// breaks the signature, and so does dropping them to pass the document off
// as one of the older form, which signs the bytes themselves.
func TestStatementCoversExpiryAndLogHead(t *testing.T) {
	k := key(t, seedA)
	data := registryFor(k)
	head := &auditlog.Head{Seq: 7, Hash: strings.Repeat("0f", 32)}
	doc := SignWith(data, k, when, Options{Expires: when.Add(48 * time.Hour), Log: head})
	v, err := Verify(data, doc, curatorkey.Public(k))
	if err != nil {
		t.Fatal(err)
	}
	if !v.Expires.Equal(when.Add(48*time.Hour)) || v.Log == nil || *v.Log != *head {
		t.Fatalf("verified %+v", v)
	}
	edit := func(f func(*gen.Signature)) []byte {
		sig, err := Parse(doc)
		if err != nil {
			t.Fatal(err)
		}
		f(sig)
		return gen.EncodeSignature(sig)
	}
	later, seq, other := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC), 8, strings.Repeat("aa", 32)
	for name, tampered := range map[string][]byte{
		"later expiry":   edit(func(s *gen.Signature) { s.Expires = &later }),
		"other seq":      edit(func(s *gen.Signature) { s.LogSeq = &seq }),
		"other head":     edit(func(s *gen.Signature) { s.LogHead = &other }),
		"no log head":    edit(func(s *gen.Signature) { s.LogSeq, s.LogHead = nil, nil }),
		"no expiry, log": edit(func(s *gen.Signature) { s.Expires = nil }),
		"old form":       edit(func(s *gen.Signature) { s.Expires, s.LogSeq, s.LogHead = nil, nil, nil }),
		"half a head":    edit(func(s *gen.Signature) { s.LogHead = nil }),
	} {
		if _, err := Verify(data, tampered, nil); err == nil {
			t.Errorf("%s: verified", name)
		} else if !errors.Is(err, ErrBadSignature) && !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestExpired(t *testing.T) {
	now := when
	for _, c := range []struct {
		exp  time.Time
		want bool
	}{{time.Time{}, false}, {now.Add(time.Second), false}, {now, true}, {now.Add(-time.Hour), true}} {
		if got := Expired(c.exp, now); got != c.want {
			t.Errorf("Expired(%v) = %v", c.exp, got)
		}
	}
}
