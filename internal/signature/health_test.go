package signature

import (
	"errors"
	"testing"
)

// A signature made for one kind of document must not verify as one of
// another: the same key signs registries and source health files, and
// a health file's signature passed off as a registry's (or the reverse)
// must be refused however the bytes are presented.
func TestHealthAndRegistrySignaturesDoNotCross(t *testing.T) {
	k := key(t, seedA)
	data := []byte(`{"checked_at":"2026-11-21T08:30:00Z"}`)
	health := SignWith(data, k, when, Options{Expires: when.Add(DefaultValidity), Header: HealthHeader})
	reg := Sign(data, k, when)

	if _, err := VerifyHealth(data, health, nil); err != nil {
		t.Fatalf("a health signature does not verify as one: %v", err)
	}
	if _, err := Verify(data, health, nil); !errors.Is(err, ErrBadSignature) {
		t.Errorf("a health signature verified as a registry's: %v", err)
	}
	if _, err := VerifyHealth(data, reg, nil); !errors.Is(err, ErrBadSignature) {
		t.Errorf("a registry signature verified as a health file's: %v", err)
	}
}

// A health signature without an expiry (the form that signs the bytes
// themselves) would vouch for the file forever; it is refused.
func TestHealthSignatureMustExpire(t *testing.T) {
	k := key(t, seedA)
	data := []byte(`{}`)
	doc := SignWith(data, k, when, Options{Header: HealthHeader})
	if _, err := VerifyHealth(data, doc, nil); !errors.Is(err, ErrMalformed) {
		t.Errorf("a health signature that never expires: %v", err)
	}
}
