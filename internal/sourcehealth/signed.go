package sourcehealth

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/signature"
)

// A curator publishes its health file beside its registry, signed with
// the registry's key (signature.HealthHeader), so the servers of curators
// who endorse it can show its sources' health as its curator's word, as
// they show its registry.

// SigSuffix names a health file's signature beside it.
const SigSuffix = ".sig"

// Published is a health file as it is served: its bytes and, when the
// curator's key signed them, the signature document; Signature is nil
// for an unsigned file.
type Published struct {
	Data      []byte
	Signature []byte
}

// Validity is how long the signature of a health file vouches for it,
// for sources checked every interval (0: once, by 3gs check): a week, or
// three intervals when that is longer, so a peer reading it between two
// checks never finds it expired, and a copy replayed long after is
// refused.
func Validity(interval time.Duration) time.Duration {
	return max(7*24*time.Hour, 3*interval)
}

// Sign encodes doc as the health file and, with a key, signs it at now
// for validity.
func Sign(doc *gen.Sourcehealth, key ed25519.PrivateKey, now time.Time, validity time.Duration) Published {
	data := append(gen.EncodeSourcehealth(doc), '\n')
	p := Published{Data: data}
	if key != nil {
		p.Signature = signature.SignWith(data, key, now, signature.Options{Expires: now.Add(validity), Header: signature.HealthHeader})
	}
	return p
}

// WritePublished replaces the health file at path with p.Data and, when p
// is signed, its signature at path.sig (else removes a signature left
// from before, which no longer matches), each atomically and without
// following a link. A reader between the two writes sees a pair that
// does not verify, and tries again later.
func WritePublished(path string, p Published) error {
	if len(p.Data) > MaxSize {
		return fmt.Errorf("the source health file is %d bytes, over the %d-byte bound of %s; not written", len(p.Data), MaxSize, path)
	}
	if err := safefile.WriteNoFollow(path, p.Data, 0o644); err != nil {
		return err
	}
	if p.Signature == nil {
		if err := os.Remove(path + SigSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	return safefile.WriteNoFollow(path+SigSuffix, p.Signature, 0o644)
}

// ReadPublished reads and checks the health file at path, as Read does,
// and returns it with its signature, if any, as they are to be served; a
// missing file is nil, a zero Published and no error.
func ReadPublished(path string) (*gen.Sourcehealth, Published, error) {
	data, err := safefile.ReadNoFollow(path, MaxSize, "source health file")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Published{}, nil
	}
	if err != nil {
		return nil, Published{}, err
	}
	doc, err := decode(path, data)
	if err != nil {
		return nil, Published{}, err
	}
	sig, err := safefile.ReadNoFollow(path+SigSuffix, signature.MaxSize, "source health signature")
	if errors.Is(err, fs.ErrNotExist) {
		sig = nil
	} else if err != nil {
		return nil, Published{}, err
	}
	return doc, Published{Data: data, Signature: sig}, nil
}
