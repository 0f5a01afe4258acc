package signature

import (
	"github.com/three-good-sources/3gs/internal/safefile"

	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// pendingSuffix names the signature of registry bytes that are being put
// in place: it exists only between the steps of WriteSigned.
const pendingSuffix = ".sig.next"

// WriteSigned replaces the registry at path with data and its signature
// file with a signature of data made with key, so that a crash at any
// moment leaves a registry and a signature that verify together.
//
// Two files cannot be renamed in one step, so the new signature is first
// put in place under a pending name; then the registry is replaced; then
// the pending signature takes its final name. A crash before the registry
// is replaced leaves the old pair intact. A crash after leaves the new
// registry with the old signature and the pending one, which ReadSigned
// recognises and completes. It returns the signature document written.
func WriteSigned(path string, data []byte, key ed25519.PrivateKey, now time.Time, perm fs.FileMode) ([]byte, error) {
	return WriteSignedWith(path, data, key, now, Options{Expires: now.Add(DefaultValidity)}, perm)
}

// WriteSignedWith is WriteSigned with a signature covering what o says.
func WriteSignedWith(path string, data []byte, key ed25519.PrivateKey, now time.Time, o Options, perm fs.FileMode) ([]byte, error) {
	pending := path + pendingSuffix
	doc := SignWith(data, key, now, o)
	if err := safefile.Write(pending, doc, 0o644); err != nil {
		return nil, fmt.Errorf("writing the new signature: %w", err)
	}
	if err := safefile.Write(path, data, perm); err != nil {
		os.Remove(pending)
		return nil, fmt.Errorf("writing the registry: %w", err)
	}
	if err := os.Rename(pending, path+Suffix); err != nil {
		return nil, fmt.Errorf("putting the new signature in place: %w", err)
	}
	return doc, nil
}

// ReadSigned reads the registry at path and its signature file (nil when
// there is none). If a write by WriteSigned was interrupted after the
// registry was replaced, it finishes that write first: a pending signature
// becomes the signature when the current one does not verify the registry
// on disk and the pending one does. Whether its signer is the curator is
// still for Check to decide, so a stray pending file gains nothing.
func ReadSigned(path string, maxSize int64) (data, doc []byte, err error) {
	data, doc, pending, err := ReadPair(path, maxSize)
	if err != nil || !pending {
		return data, doc, err
	}
	if err := os.Rename(path+pendingSuffix, path+Suffix); err != nil {
		return nil, nil, fmt.Errorf("completing an interrupted signed write of %s: %w", path, err)
	}
	return data, doc, nil
}

// ReadPair reads the registry at path and the signature that goes with
// it, changing nothing on disk: the signature file, or, when a signed
// write was interrupted after the registry was replaced, the pending
// signature that write left (pending is then true; FinishHint says how to
// complete it). Readers that must not write, such as 3gs verify, so see
// the last complete pair.
func ReadPair(path string, maxSize int64) (data, doc []byte, pending bool, err error) {
	if data, err = ReadLimited(path, maxSize, "registry"); err != nil {
		return nil, nil, false, err
	}
	// Without a pending signature (the usual case) there is nothing to
	// choose between, and the registry is not hashed here: the loader
	// hashes it once, and Check verifies doc against that digest.
	doc, pending, err = SignatureOf(path, data, "")
	if err != nil {
		return nil, nil, false, err
	}
	return data, doc, pending, nil
}

// SignatureOf is ReadPair for a caller that holds the registry's bytes
// (data) already, with their digest when it has taken it ("" for not
// yet): it reads only the signature files beside path.
func SignatureOf(path string, data []byte, digest string) (doc []byte, pending bool, err error) {
	doc, err = ReadLimited(path+Suffix, MaxSize, "signature file")
	if errors.Is(err, fs.ErrNotExist) {
		doc, err = nil, nil
	}
	if err != nil {
		return nil, false, err
	}
	next, perr := ReadLimited(path+pendingSuffix, MaxSize, "signature file")
	if perr != nil {
		return doc, false, nil
	}
	if digest == "" {
		digest = Digest(data)
	}
	if doc != nil {
		if _, verr := VerifyDigest(data, digest, doc, nil); verr == nil {
			return doc, false, nil
		}
	}
	if _, verr := VerifyDigest(data, digest, next, nil); verr != nil {
		return doc, false, nil // stale: from a write that never replaced the registry
	}
	return next, true, nil
}

// FinishHint says how to complete the interrupted signed write of the
// registry at path that ReadPair found.
func FinishHint(path string) string {
	return "a signed write of " + path + " was interrupted after the registry was replaced; its new signature waits in " + path + pendingSuffix +
		". Finish it with: mv " + ShellQuote(path+pendingSuffix) + " " + ShellQuote(path+Suffix) + " (3gs serve also finishes it when it starts)"
}

// ReadLimited reads the file at path: a regular file of at most limit
// bytes (safefile.Read); what names its kind in messages.
func ReadLimited(path string, limit int64, what string) ([]byte, error) {
	return safefile.Read(path, limit, what)
}
