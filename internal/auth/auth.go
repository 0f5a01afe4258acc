// Package auth decides who a caller is. A caller with no token, or with a
// token the server does not know, is public; a known token carries the tier
// it was made for (user or admin). Tokens are random strings shown once
// when made; the tokens file (schema/tokens.schema.json) keeps only their
// SHA-256, so a copy of the file grants nothing.
package auth

import (
	"github.com/three-good-sources/3gs/internal/safefile"

	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"sync/atomic"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/strictjson"
)

// Caller is who sent a request, as far as the server can tell.
type Caller struct {
	Tier gen.Tier
	// Name is the token's name; empty for a public caller.
	Name string
	// Presented is set when the request carried a token, known or not.
	Presented bool
}

// Authenticated reports whether the caller presented a token the server
// knows.
func (c Caller) Authenticated() bool { return c.Name != "" }

type callerKey struct{}

// WithCaller returns ctx carrying c, for tools that record who acted.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller ctx carries; public when none.
func CallerFrom(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}

type transportKey struct{}

// WithTransportToken returns ctx carrying the token the transport received
// (HTTP's Authorization: Bearer). It outranks any token in the message.
func WithTransportToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, transportKey{}, token)
}

// TransportToken returns the transport's token, if it received one.
func TransportToken(ctx context.Context) (string, bool) {
	t, ok := ctx.Value(transportKey{}).(string)
	return t, ok
}

// tokenPrefix marks 3gs tokens, so secret scanners and people can tell
// what a leaked string is.
const tokenPrefix = "3gs_"

// tokenBytes is the randomness in a token: 256 bits.
const tokenBytes = 32

// NewToken returns a fresh random token.
func NewToken() (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// Hash is the hex SHA-256 of a token, as the tokens file stores it.
func Hash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// maxTokenLen bounds what Identify hashes: longer strings are no token.
const maxTokenLen = 256

// Keyring is the set of tokens a server accepts. It is safe for concurrent
// use; Reload replaces the whole set at once.
type Keyring struct {
	path string
	set  atomic.Pointer[[]entry]
}

type entry struct {
	name string
	tier gen.Tier
	hash [sha256.Size]byte
}

// LoadKeyring reads the tokens file at path.
func LoadKeyring(path string) (*Keyring, error) {
	k := &Keyring{path: path}
	if err := k.Reload(); err != nil {
		return nil, err
	}
	return k, nil
}

// Reload re-reads the tokens file. On error the tokens in use stay as they
// were: a broken edit must not lock everyone out or let everyone in.
func (k *Keyring) Reload() error {
	doc, err := ReadFile(k.path)
	if err != nil {
		return err
	}
	set := make([]entry, 0, len(doc.Tokens))
	for _, t := range doc.Tokens {
		tier, _ := gen.ParseTier(string(t.Tier))
		e := entry{name: t.Name, tier: tier}
		hex.Decode(e.hash[:], []byte(t.SHA256))
		set = append(set, e)
	}
	k.set.Store(&set)
	return nil
}

// Identify returns the caller a token stands for. An empty token is a
// public caller; so is an unknown one, marked Presented. Every stored hash
// is compared, in constant time, whatever matches.
func (k *Keyring) Identify(token string) Caller {
	if token == "" {
		return Caller{}
	}
	c := Caller{Presented: true}
	if k == nil || len(token) > maxTokenLen {
		return c
	}
	sum := sha256.Sum256([]byte(token))
	for _, e := range *k.set.Load() {
		if subtle.ConstantTimeCompare(sum[:], e.hash[:]) == 1 {
			c.Tier, c.Name = e.tier, e.name
		}
	}
	return c
}

// Count returns how many tokens of each tier the keyring holds.
func (k *Keyring) Count() map[gen.Tier]int {
	n := map[gen.Tier]int{}
	if k != nil {
		for _, e := range *k.set.Load() {
			n[e.tier]++
		}
	}
	return n
}

// MaxFileSize bounds the tokens file.
const MaxFileSize = 1 << 20

// ReadFile reads and checks a tokens file: the schema, then names and
// hashes that must be unique. A missing file holds no tokens.
func ReadFile(path string) (*gen.Tokens, error) {
	data, err := safefile.Read(path, MaxFileSize, "tokens file")
	if errors.Is(err, fs.ErrNotExist) {
		return &gen.Tokens{Tokens: []gen.Token{}}, nil
	}
	if err != nil {
		return nil, err
	}
	doc, err := gen.DecodeTokens(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not a valid tokens file: %w", path, strictjson.WithPosition(err, data))
	}
	var errs strictjson.Errors
	names, hashes := map[string]int{}, map[string]int{}
	for i, t := range doc.Tokens {
		at := "tokens[" + strconv.Itoa(i) + "]"
		if j, dup := names[t.Name]; dup {
			errs = append(errs, &strictjson.Error{Path: at + ".name", Reason: fmt.Sprintf("same name as tokens[%d]; names identify tokens, so each must be unique", j)})
		}
		if j, dup := hashes[t.SHA256]; dup {
			errs = append(errs, &strictjson.Error{Path: at + ".sha256", Reason: fmt.Sprintf("same token as tokens[%d]", j)})
		}
		names[t.Name], hashes[t.SHA256] = i, i
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s is not a valid tokens file: %w", path, errs)
	}
	return doc, nil
}
