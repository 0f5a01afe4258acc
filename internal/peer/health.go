package peer

import (
	"context"
	"crypto/ed25519"
	"errors"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/sourcehealth"
)

// Health is a peer's source health file as accepted: what its curator's
// last check said of each source its registry lists, by URL.
type Health struct {
	Index     *sourcehealth.Index
	CheckedAt time.Time
	Expires   time.Time
	Summary   gen.SourcehealthSummary
}

// LocateHealth returns where the health file of the registry an
// endorsement's url names is published, and its signature: beside the
// registry (Locate), its URL plus ".health.json" and that plus ".sig";
// a node serves them at {url}/registry.health.json(.sig).
func LocateHealth(raw string) (healthURL, sigURL string, err error) {
	reg, _, err := Locate(raw)
	if err != nil {
		return "", "", err
	}
	return reg + sourcehealth.Suffix, reg + sourcehealth.Suffix + sourcehealth.SigSuffix, nil
}

// maxClockSkew is how far in the future a peer's checked_at may be
// before its health file is refused as not yet true.
const maxClockSkew = 5 * time.Minute

// AcceptHealth checks a peer's health file against key, the endorsed
// key its registry verified against, and returns what it says of the
// sources reg (the peer's accepted registry) lists; sources reg does not
// list are dropped, so what is kept is bounded by the registry. It is
// refused unless the signature is the curator's, made for a health file
// (never a registry's signature passed off as one), and unexpired; and
// when its check is older than last's (a rollback, which would bring a
// dead source back to life) or in the future.
func AcceptHealth(key ed25519.PublicKey, data, sig []byte, reg *registry.Registry, last *Health, now time.Time) (*Health, error) {
	v, err := signature.VerifyHealth(data, sig, key)
	if err != nil {
		return nil, refuseAs(RefusedSignature, "source health file: %v", err)
	}
	if why := expiryProblem(v.Expires, now); why != "" {
		return nil, refuseAs(RefusedExpired, "source health file: %s", why)
	}
	doc, err := gen.DecodeSourcehealth(data)
	if err != nil {
		return nil, refuseAs(RefusedInvalid, "source health file: %v", err)
	}
	at := doc.CheckedAt
	switch {
	case at.After(now.Add(maxClockSkew)):
		return nil, refuseAs(RefusedInvalid, "source health file: checked at %s, in the future", at.UTC().Format(time.RFC3339))
	case last != nil && at.Before(last.CheckedAt):
		return nil, refuseAs(RefusedRollback, "source health file: checked at %s, before the %s already accepted", at.UTC().Format(time.RFC3339), last.CheckedAt.UTC().Format(time.RFC3339))
	}
	kept := doc.Sources[:0]
	for _, c := range doc.Sources {
		if sourcehealth.StillListed(reg, c) {
			kept = append(kept, c)
		}
	}
	doc.Sources = kept
	return &Health{Index: sourcehealth.NewIndex(doc), CheckedAt: at, Expires: v.Expires, Summary: doc.Summary}, nil
}

// errNoHealth is a peer that publishes no health file: nothing to show,
// and nothing wrong.
var errNoHealth = errors.New("the peer publishes no source health file")

// FetchHealth reads the health file published beside the registry at
// rawURL and accepts it (AcceptHealth) for c, the copy of the registry
// just accepted. A peer that publishes none returns errNoHealth. It
// shares the fetcher's client, byte budget and limits, within its own
// timeout.
func (f *Fetcher) FetchHealth(ctx context.Context, key ed25519.PublicKey, rawURL string, c *Copy, last *Health, now time.Time) (*Health, error) {
	hURL, sigURL, err := LocateHealth(rawURL)
	if err != nil {
		return nil, refuseAs(RefusedInvalidEndorsement, "%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, f.Timeout)
	defer cancel()
	data, _, _, _, release, err := f.get(ctx, hURL, min(f.MaxBytes, sourcehealth.MaxSize), "", healthWhat)
	defer release()
	if err != nil {
		return nil, err
	}
	// A health file without its signature is the peer's unsigned word,
	// which is not shown: any status but 200 fails the same way.
	sig, _, _, _, releaseSig, err := f.get(ctx, sigURL, signature.MaxSize, "", "source health signature")
	releaseSig()
	if err != nil {
		return nil, err
	}
	return AcceptHealth(key, data, sig, c.Registry, last, now)
}

// healthWhat names a health file to the fetch client and to get, which
// answers its 404 with errNoHealth.
const healthWhat = "source health file"
