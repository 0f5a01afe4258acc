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
	// The counts are the origin's word as well: they are made again from
	// what was kept, so that they say no more than the sources listed.
	sourcehealth.Count(doc)
	return &Health{Index: sourcehealth.NewIndex(doc), CheckedAt: at, Expires: v.Expires, Summary: doc.Summary}, nil
}

// ErrNoHealth is a peer that publishes no health file: nothing to show,
// and nothing wrong.
var ErrNoHealth = errors.New("the peer publishes no source health file")

// FetchHealth reads the health file published beside the registry at
// rawURL and accepts it (AcceptHealth) for c, the copy of the registry
// just accepted. A peer that publishes none returns ErrNoHealth. It
// shares the fetcher's client, byte budget and limits, within its own
// timeout.
func (f *Fetcher) FetchHealth(ctx context.Context, key ed25519.PublicKey, rawURL string, c *Copy, last *Health, now time.Time) (*Health, error) {
	h, _, err := f.FetchPublishedHealth(ctx, key, rawURL, c, last, HeldHealth{}, now)
	return h, err
}

// HeldHealth is a health file as last taken from a node, to publish in
// turn and to ask again for conditionally.
type HeldHealth struct {
	sourcehealth.Published
	// ETag is the file's, as the node sent it; "" asks unconditionally.
	ETag string
}

// FetchPublishedHealth is FetchHealth that also returns the file and its
// signature as the node published them, byte for byte, for a read
// replica to publish in turn: they verify against the same key. held is
// what the last call returned: a file unchanged since (304) is not sent
// again, and held's is checked again with the signature now published.
func (f *Fetcher) FetchPublishedHealth(ctx context.Context, key ed25519.PublicKey, rawURL string, c *Copy, last *Health, held HeldHealth, now time.Time) (*Health, HeldHealth, error) {
	hURL, sigURL, err := LocateHealth(rawURL)
	if err != nil {
		return nil, HeldHealth{}, refuseAs(RefusedInvalidEndorsement, "%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, f.Timeout)
	defer cancel()
	etag := held.ETag
	if held.Data == nil {
		etag = ""
	}
	data, tag, unchanged, _, release, err := f.get(ctx, hURL, min(f.MaxBytes, sourcehealth.MaxSize), etag, healthWhat)
	defer release()
	if err != nil {
		return nil, HeldHealth{}, err
	}
	if unchanged {
		data = held.Data
	}
	// A health file without its signature is the peer's unsigned word,
	// which is not shown: any status but 200 fails the same way.
	sig, _, _, _, releaseSig, err := f.get(ctx, sigURL, signature.MaxSize, "", "source health signature")
	releaseSig()
	if err != nil {
		return nil, HeldHealth{}, err
	}
	h, err := AcceptHealth(key, data, sig, c.Registry, last, now)
	if err != nil {
		return nil, HeldHealth{}, err
	}
	return h, HeldHealth{Published: sourcehealth.Published{Data: data, Signature: sig}, ETag: tag}, nil
}

// healthWhat names a health file to the fetch client and to get, which
// answers its 404 with errNoHealth.
const healthWhat = "source health file"
