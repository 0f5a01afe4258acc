package app

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
)

// checkProvenance applies the start-up policy on signatures and keys. A
// signature file that does not verify, or a missing one when the registry
// names a real curator key, stops the server unless --allow-unsigned says
// to serve the registry marked unverified (signature.Status.Refuse). A
// configured key must be the curator's, or what it signs later could never
// verify.
func checkProvenance(c *Config, s *Served) (ed25519.PrivateKey, error) {
	log := c.Log
	st := s.Sig
	refused := st.Refuse(s.Reg)
	switch {
	case refused != nil && !c.AllowUnsigned:
		what := "its signature does not verify: " + refused.Error()
		if errors.Is(refused, signature.ErrMissing) {
			what = "it names the curator key " + s.Reg.Curator().Pubkey + " but " + signature.ShellQuote(s.Files.Signature) + " is missing, so nothing shows the curator wrote it"
		}
		return nil, fmt.Errorf("refusing to serve %s: %s\n"+
			"If the registry is the curator's, the curator signs it: 3gs sign --key-file KEY %s\n"+
			"To serve it anyway, reported as not verified by get_provenance and /health, add --allow-unsigned (THREEGS_ALLOW_UNSIGNED=1).",
			s.Name, what, signature.ShellQuote(s.Files.Registry))
	case refused != nil:
		log.Warn("serving a registry whose signature is missing or does not verify (--allow-unsigned); it is reported as not verified", "registry", s.Name, "problem", refused.Error())
	case s.Path != "" && st.Stale(time.Now()) != nil && !c.AllowExpired:
		// The embedded registry is exempt: it is part of the binary, and
		// as fresh as the binary is.
		return nil, fmt.Errorf("refusing to serve %s: %v.\n"+
			"The curator signs it again: 3gs sign --key-file KEY %s. To serve it anyway, add --allow-expired (THREEGS_ALLOW_EXPIRED=1).",
			s.Name, st.Stale(time.Now()), signature.ShellQuote(s.Files.Registry))
	case st.Verified:
		if err := st.Stale(time.Now()); err != nil && s.Path != "" {
			log.Warn("serving a registry whose signature no longer vouches for it (--allow-expired)", "registry", s.Name, "problem", err.Error())
		}
		expires := any(st.Expires)
		switch {
		case s.Path == "":
			expires = "never: the embedded registry is exempt"
		case st.Expires.IsZero():
			expires = "never"
		}
		log.Info("registry signature verified", "signer", curatorkey.URI(st.Signer), "signed_at", st.SignedAt.UTC().Format(time.RFC3339), "expires", expires)
	default:
		log.Info("serving an unsigned registry: its curator key is "+registry.Placeholder, "registry", s.Name)
	}
	if c.Key == nil {
		return nil, nil
	}
	key, from, err := c.Key(func(msg string) { log.Warn(msg) })
	if err != nil || key == nil {
		return nil, err
	}
	if err := signature.CheckCurator(s.Reg, curatorkey.Public(key)); err != nil {
		return nil, fmt.Errorf("the key from %s is %s, but %s names curator key %s.\n"+
			"Serve with the curator's key, or make this key the curator's: set \"pubkey\": %q in the registry's \"curator\" and run 3gs sign.",
			from, curatorkey.URI(curatorkey.Public(key)), s.Name, s.Reg.Curator().Pubkey, curatorkey.URI(curatorkey.Public(key)))
	}
	log.Info("curator key loaded", "from", from, "pubkey", curatorkey.URI(curatorkey.Public(key)))
	return key, nil
}

// trustAnchor is the curator key this server trusts for as long as it
// runs, and where it came from: --pubkey, else the public half of the
// curator key file, else the signer of the registry served at start (nil
// when that is not verified). With --pubkey, the registry served at start
// must be verified under it, whatever --allow-unsigned says: a file that
// names another curator and carries that curator's valid signature is
// exactly what re-keying looks like.
func trustAnchor(pinned ed25519.PublicKey, s *Served, key ed25519.PrivateKey) (ed25519.PublicKey, string, error) {
	anchor, from := pinned, "--pubkey"
	if key != nil {
		pub := curatorkey.Public(key)
		if anchor != nil && !anchor.Equal(pub) {
			return nil, "", fmt.Errorf("--pubkey is %s but the curator key file holds %s; give the key file of the trusted curator, or drop one of the two.", curatorkey.URI(anchor), curatorkey.URI(pub))
		}
		if anchor == nil {
			return pub, "the public half of the curator key file", nil
		}
	}
	if anchor == nil {
		if s.Sig.Verified {
			return s.Sig.Signer, "the registry served at start", nil
		}
		return nil, "", nil
	}
	if !s.Sig.Verified || !s.Sig.Signer.Equal(anchor) {
		why := "it has no signature file"
		switch {
		case s.Sig.Signed() && !s.Sig.Verified:
			why = "its signature does not verify: " + s.Sig.Problem.Error()
		case s.Sig.Verified:
			why = "it is signed by " + curatorkey.URI(s.Sig.Signer) + " (the curator it names)"
		}
		return nil, "", fmt.Errorf("refusing to serve %s: --pubkey trusts only registries signed by %s, and %s.\n"+
			"Serve a copy the trusted curator signed, or, if the curator really changed keys, start with --pubkey set to the new key.", s.Name, curatorkey.URI(anchor), why)
	}
	return anchor, from, nil
}
