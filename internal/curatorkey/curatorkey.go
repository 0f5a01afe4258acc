// Package curatorkey holds the curator's identity: an Ed25519 keypair written the
// way PKARR writes it. A public key is the z-base-32 encoding of its 32
// bytes (52 characters), shown in registries as "pk:" followed by those 52
// characters; a secret key is its 32-byte seed in hex (64 characters), the
// form PKARR_SECRET_KEY and key files hold.
//
// The cryptography is the standard library's crypto/ed25519; z-base-32 is
// github.com/tv42/zbase32; whether 32 bytes are a point on the curve is
// decided by filippo.io/edwards25519, because a key that is not a point can
// never verify anything and PKARR rejects it too.
package curatorkey

import (
	"github.com/three-good-sources/3gs/internal/safefile"

	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"filippo.io/edwards25519"
	"github.com/tv42/zbase32"
)

// Prefix starts a public key written as a URI, the form registries use.
const Prefix = "pk:"

// EncodedLen is the length of a public key in z-base-32.
const EncodedLen = 52

// Alphabet is z-base-32's alphabet, for schemas and error messages.
const Alphabet = "ybndrfg8ejkmcpqxot1uwisza345h769"

// Encode returns the z-base-32 form of a public key, without the prefix.
func Encode(pub ed25519.PublicKey) string { return zbase32.EncodeToString(pub) }

// URI returns the public key as registries write it: "pk:" and z-base-32.
func URI(pub ed25519.PublicKey) string { return Prefix + Encode(pub) }

// ParsePublicKey reads a z-base-32 Ed25519 public key, with or without the
// "pk:" prefix. It accepts only the canonical encoding of a curve point, so
// each key has exactly one spelling and two spellings never name the same
// key. Errors say what is wrong with the text.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	z := strings.TrimPrefix(s, Prefix)
	if len(z) != EncodedLen {
		return nil, fmt.Errorf("is %d characters long; a z-base-32 Ed25519 public key has %d (after the optional %q)", len(z), EncodedLen, Prefix)
	}
	for i := 0; i < len(z); i++ {
		if !strings.ContainsRune(Alphabet, rune(z[i])) {
			return nil, fmt.Errorf("has %q at position %d, which is not in the z-base-32 alphabet %q (keys are lower case)", z[i], len(s)-len(z)+i+1, Alphabet)
		}
	}
	raw, err := zbase32.DecodeString(z)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("does not decode to %d bytes", ed25519.PublicKeySize)
	}
	// 52 characters carry 260 bits; the last 4 must be zero.
	if Encode(raw) != z {
		return nil, errors.New("is not canonical z-base-32: its last character sets bits beyond the 32-byte key")
	}
	if _, err := new(edwards25519.Point).SetBytes(raw); err != nil {
		return nil, errors.New("is not an Ed25519 public key: the bytes are not a point on the curve")
	}
	return ed25519.PublicKey(raw), nil
}

// SeedHexLen is the length of a secret key written as a hex seed.
const SeedHexLen = 2 * ed25519.SeedSize

// ParseSeed reads a secret key written as its 32-byte seed in hex. The error
// never repeats the text, which may be a secret.
func ParseSeed(s string) (ed25519.PrivateKey, error) {
	s = strings.TrimSpace(s)
	if len(s) != SeedHexLen {
		return nil, fmt.Errorf("must be %d hex characters (a 32-byte Ed25519 seed), found %d characters", SeedHexLen, len(s))
	}
	seed, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("must be %d hex characters (a 32-byte Ed25519 seed), found a character that is not 0-9 or a-f", SeedHexLen)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// Generate returns a new keypair from the operating system's random source.
func Generate() (ed25519.PrivateKey, error) {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	return key, err
}

// SeedHex is the text form of a secret key: its seed in hex.
func SeedHex(key ed25519.PrivateKey) string { return hex.EncodeToString(key.Seed()) }

// KeyFileMode is the mode key files are created with: the owner alone may
// read the secret.
const KeyFileMode fs.FileMode = 0o600

// WriteKeyFile stores key at path as its hex seed and a newline, with mode
// 0600. It refuses to replace an existing file: losing a curator key means
// every signature made with it can no longer be renewed.
func WriteKeyFile(path string, key ed25519.PrivateKey) error {
	err := safefile.Create(path, []byte(SeedHex(key)+"\n"), KeyFileMode)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists; 3gs never overwrites a key file. Choose another path, or move the old key away first if you really mean to replace it", path)
	}
	return err
}

// KeyFile is a secret key read from a file, with what the file's mode says
// about who else can read it.
type KeyFile struct {
	Key ed25519.PrivateKey
	// Exposed is set when the file is readable or writable by its group or
	// by others; the caller decides whether to warn or refuse.
	Exposed bool
	Mode    fs.FileMode
}

// maxKeyFile bounds what ReadKeyFile reads: a key file is one short line.
const maxKeyFile = 1024

// ReadKeyFile reads a key file written by WriteKeyFile (a hex seed; the
// surrounding white space is ignored).
func ReadKeyFile(path string) (*KeyFile, error) {
	buf, st, err := safefile.ReadStat(path, maxKeyFile, "key file")
	if errors.Is(err, safefile.ErrTooLarge) {
		return nil, fmt.Errorf("%s is not a key file: a key file holds one line of %d hex characters", path, SeedHexLen)
	}
	if err != nil {
		return nil, err
	}
	key, err := ParseSeed(string(buf))
	if err != nil {
		return nil, fmt.Errorf("%s is not a key file: its content %v", path, err)
	}
	return &KeyFile{Key: key, Exposed: st.Mode().Perm()&0o077 != 0, Mode: st.Mode().Perm()}, nil
}

// Public returns key's public half.
func Public(key ed25519.PrivateKey) ed25519.PublicKey {
	return key.Public().(ed25519.PublicKey)
}
