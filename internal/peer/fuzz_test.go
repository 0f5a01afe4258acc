package peer

import (
	"testing"

	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
)

// FuzzAccept feeds the peer-ingest check bytes that are validly signed by
// the endorsed key (so the fuzzer reaches the loader and the curator and
// version checks behind the signature) and a signature document of its own
// making. Whatever they hold, Accept must not panic, and what it accepts
// must be a registry of the endorsed curator that accepts again over
// itself and refuses to go back to it from a newer version.
func FuzzAccept(f *testing.F) {
	key, err := curatorkey.Generate()
	if err != nil {
		f.Fatal(err)
	}
	pub := curatorkey.Public(key)
	uri := curatorkey.URI(pub)
	f.Add(registryDoc(uri, "1.0.0", ""), []byte(nil))
	f.Add(registryDoc(uri, "2.0.0-rc.1", " and more"), []byte(`{"algorithm":"ed25519"}`))
	f.Add([]byte(`{"version":"1.0.0"}`), []byte("not a signature"))
	f.Add([]byte{}, []byte{})
	// Judged at the signing time: the checks behind the signature, not
	// the calendar, are what is fuzzed.
	at := &AcceptOptions{Now: signedAt}
	newer, err := Accept(pub, registryDoc(uri, "999.0.0", ""), signature.Sign(registryDoc(uri, "999.0.0", ""), key, signedAt), at)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data, rawSig []byte) {
		if len(data) > 1<<16 || len(rawSig) > signature.MaxSize {
			return
		}
		// Any signature document, as a peer may send: never accepted
		// unless it really is the endorsed key's over these bytes.
		if c, err := Accept(pub, data, rawSig, at); err == nil && c.Registry.Curator().Pubkey != uri {
			t.Fatalf("accepted a registry of curator %s under %s", c.Registry.Curator().Pubkey, uri)
		}
		c, err := Accept(pub, data, signature.Sign(data, key, signedAt), at)
		if err != nil {
			if !IsRefusal(err) {
				t.Fatalf("a check of bytes in hand failed as a network error: %v", err)
			}
			return
		}
		if c.Registry.Curator().Pubkey != uri {
			t.Fatalf("accepted a registry of curator %s under %s", c.Registry.Curator().Pubkey, uri)
		}
		if _, err := Accept(pub, data, signature.Sign(data, key, signedAt), &AcceptOptions{Now: signedAt, Last: c}); err != nil {
			t.Fatalf("the same bytes again were refused: %v", err)
		}
		if registry.CompareVersions(c.Registry.Version(), newer.Registry.Version()) < 0 {
			if _, err := Accept(pub, data, signature.Sign(data, key, signedAt), &AcceptOptions{Now: signedAt, Last: newer}); err == nil {
				t.Fatalf("version %s accepted after %s", c.Registry.Version(), newer.Registry.Version())
			}
		}
	})
}
