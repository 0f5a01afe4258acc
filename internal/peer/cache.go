package peer

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/safefile"

	"github.com/three-good-sources/3gs/internal/strictjson"
)

// The peer cache is a directory with one file per peer
// (schema/peercache.schema.json), named after its key: the registry and
// signature exactly as the peer served them, where from and when. Each
// file is written atomically, only after every check has passed, and
// checked again in full when read: whoever can write the directory can
// delete a peer's copy, but not make us serve a registry its curator did
// not sign, nor an older one than the file held, nor one whose signature
// has expired. The audit log head a copy's signature covers is read from
// the signature again, so it needs no place of its own in the file. The
// files are 3gs's own: a symbolic link in their place is refused, never
// followed, when reading (O_NOFOLLOW) and when writing, so it cannot make
// 3gs overwrite the file it names.

// cachePath is the file that holds pubkey's copy.
func cachePath(dir, pubkey string) string {
	return filepath.Join(dir, strings.TrimPrefix(pubkey, curatorkey.Prefix)+".json")
}

// cacheLimit bounds a cache file: the registry escaped as a JSON string
// (at most twice its size for the characters a registry holds escaped:
// quotes and backslashes), a signature and a little more.
func cacheLimit(maxBytes int64) int64 { return 2*maxBytes + 16<<10 }

// saveCopy writes c as pubkey's cached copy.
func saveCopy(dir, pubkey string, c *Copy) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	entry := gen.PeerCache{
		Pubkey:    pubkey,
		URL:       c.URL,
		FetchedAt: c.FetchedAt.Truncate(time.Second),
		Registry:  string(c.Registry.Bytes()),
		Signature: string(c.Signature),
	}
	if c.ETag != "" {
		entry.Etag = &c.ETag
	}
	return safefile.WriteNoFollow(cachePath(dir, pubkey), gen.EncodePeerCache(&entry), 0o644)
}

// loadCopy reads pubkey's cached copy and checks it as if it had just
// been fetched at now, but for its expiry. It returns nil and no error
// when there is none.
//
// An expired copy is still returned: it is not to be served (the Network
// withholds it and reports the peer refused), but it is the last copy
// accepted, which the next one must not go back from in version or audit
// log. Dropping it would let a peer that comes back after the copy
// expired start again from any older signed copy, or any fork.
func loadCopy(dir, pubkey string, key ed25519.PublicKey, maxBytes int64, now time.Time) (*Copy, error) {
	path := cachePath(dir, pubkey)
	data, err := safefile.ReadNoFollow(path, cacheLimit(maxBytes), "peer cache file")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	entry, err := gen.DecodePeerCache(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, strictjson.WithPosition(err, data))
	}
	if entry.Pubkey != pubkey {
		return nil, fmt.Errorf("%s holds the copy of %s, not of %s", path, entry.Pubkey, pubkey)
	}
	c, err := Accept(key, []byte(entry.Registry), []byte(entry.Signature), &AcceptOptions{Now: now, AllowExpired: true})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	c.URL, c.FetchedAt = entry.URL, entry.FetchedAt
	if entry.Etag != nil {
		c.ETag = *entry.Etag
	}
	return c, nil
}

// SaveCopy writes c as the cached copy of the curator whose key is pubkey
// (pk:…) in dir, as a follower keeps its origin's last good copy.
func SaveCopy(dir, pubkey string, c *Copy) error { return saveCopy(dir, pubkey, c) }

// LoadCopy reads the copy SaveCopy wrote and checks it again in full (see
// loadCopy): nil and no error when there is none; an expired copy is
// returned, for the caller to keep as the baseline but not serve.
func LoadCopy(dir, pubkey string, key ed25519.PublicKey, maxBytes int64, now time.Time) (*Copy, error) {
	return loadCopy(dir, pubkey, key, maxBytes, now)
}

// Served says whether c may be served at now: its signature is in force,
// or expired ones are allowed.
func (c *Copy) Served(now time.Time, allowExpired bool) bool {
	return allowExpired || expiryProblem(c.Expires, now) == ""
}
