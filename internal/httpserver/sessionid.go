package httpserver

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"slices"
	"time"

	"github.com/three-good-sources/3gs/internal/mcp"
)

// A 2025-era session id carries everything a replica needs to serve the
// session without having seen its initialize, signed with a secret the
// replicas share, so that N replicas behind a load balancer need neither
// sticky routing nor a shared session store.
//
// The 51 bytes, before base64url without padding (68 characters, all
// visible ASCII as the specification requires):
//
//	offset size
//	 0     16   random
//	16      1   format version (sessionIDFormat)
//	17      2   protocol version negotiated, as days since 1970-01-01
//	19      8   expiry, Unix seconds
//	27      8   issuer: random, drawn once per process
//	35     16   HMAC-SHA256 of bytes 0-34, truncated
//
// The random part comes first so the first characters, which the access
// log keeps, tell sessions apart; the fields after it are the same for
// every session a process opens within a second. The protocol version is
// a date, not an index into mcp.SupportedVersions, because that list
// shifts when a version is added and two builds side by side during a
// rolling upgrade would read the same index differently.
//
// The issuer is how a process tells the ids it issued from the others'.
// For its own ids its table is the whole truth: one missing from it was
// ended here (DELETE, idle, eviction) and gets 404, exactly as before
// ids could be checked without the table. Any other valid id is adopted.
const (
	sessionIDFormat = 1

	idRandom   = 0
	idFormat   = 16
	idVersion  = 17
	idExpiry   = 19
	idIssuer   = 27
	idMAC      = 35
	idBytes    = 51
	idMACBytes = idBytes - idMAC

	// sessionIDLen is the length of an id as sent.
	sessionIDLen = idBytes / 3 * 4
)

// MinSessionSecretBytes is the shortest session secret accepted: HMAC-SHA256
// keys shorter than its output give up strength for nothing.
const MinSessionSecretBytes = 32

// DefaultSessionLifetime is how long a session id stays good after
// initialize, however much it is used.
const DefaultSessionLifetime = 24 * time.Hour

// idEncoding is strict: a lax decoder ignores the low bits of a final
// character, and two spellings of one id would then both verify.
var idEncoding = base64.RawURLEncoding.Strict()

// sessionIDs issues and checks session ids.
type sessionIDs struct {
	key      []byte // the MAC key, derived from the secret
	issuer   [8]byte
	lifetime time.Duration
}

// newSessionIDs signs with secret, or with a random one when it is empty:
// ids are then good on this process only, which is all a single server
// needs and asks nobody to configure anything.
func newSessionIDs(secret []byte, lifetime time.Duration) *sessionIDs {
	if len(secret) == 0 {
		secret = make([]byte, MinSessionSecretBytes)
		rand.Read(secret) // never fails: crypto/rand panics rather than return short
	}
	if len(secret) < MinSessionSecretBytes {
		panic("httpserver: a session secret must be at least 32 bytes") // the CLI refuses shorter ones first
	}
	if lifetime <= 0 {
		lifetime = DefaultSessionLifetime
	}
	// The key is derived rather than the secret used as is, so that a
	// secret file also used for something else never yields MACs that
	// mean something there.
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("3gs mcp session id v1"))
	ids := &sessionIDs{key: mac.Sum(nil), lifetime: lifetime}
	rand.Read(ids.issuer[:])
	return ids
}

// issue returns a new id for a session that negotiated version, and when
// it expires.
func (ids *sessionIDs) issue(version string, now time.Time) (string, time.Time) {
	expires := now.Add(ids.lifetime).Truncate(time.Second)
	var b [idBytes]byte
	rand.Read(b[idRandom:idFormat])
	b[idFormat] = sessionIDFormat
	binary.BigEndian.PutUint16(b[idVersion:], versionDays(version))
	binary.BigEndian.PutUint64(b[idExpiry:], uint64(expires.Unix()))
	copy(b[idIssuer:idMAC], ids.issuer[:])
	copy(b[idMAC:], ids.sum(b[:idMAC]))
	return idEncoding.EncodeToString(b[:]), expires
}

// idClaims is what a valid id says.
type idClaims struct {
	version string
	expires time.Time
	own     bool // issued by this process
}

// check reads id and says whether it is valid at now: well formed, signed
// with this secret and not expired. A version this build does not serve
// makes it invalid too, so the client initializes again and negotiates
// one it does.
func (ids *sessionIDs) check(id string, now time.Time) (idClaims, bool) {
	if len(id) != sessionIDLen {
		return idClaims{}, false
	}
	var b [idBytes]byte
	if n, err := idEncoding.Decode(b[:], []byte(id)); err != nil || n != idBytes {
		return idClaims{}, false
	}
	// The MAC first, compared in constant time: nothing an unsigned id
	// says is worth reading.
	if !hmac.Equal(b[idMAC:], ids.sum(b[:idMAC])) || b[idFormat] != sessionIDFormat {
		return idClaims{}, false
	}
	c := idClaims{
		version: daysVersion(binary.BigEndian.Uint16(b[idVersion:])),
		expires: time.Unix(int64(binary.BigEndian.Uint64(b[idExpiry:])), 0),
		own:     hmac.Equal(b[idIssuer:idMAC], ids.issuer[:]),
	}
	if !now.Before(c.expires) || !slices.Contains(mcp.LegacyVersions, c.version) {
		return idClaims{}, false
	}
	return c, true
}

func (ids *sessionIDs) sum(data []byte) []byte {
	mac := hmac.New(sha256.New, ids.key)
	mac.Write(data)
	return mac.Sum(nil)[:idMACBytes]
}

// versionDays encodes a protocol version, a YYYY-MM-DD date, as days since
// 1970-01-01. Every version initialize negotiates is a date; anything else
// becomes 0, which names no version, so its ids work only on the process
// that holds the session.
func versionDays(v string) uint16 {
	t, err := time.Parse(time.DateOnly, v)
	if err != nil || t.Unix() < 0 || t.Unix()/86400 > 0xffff {
		return 0
	}
	return uint16(t.Unix() / 86400)
}

func daysVersion(d uint16) string {
	return time.Unix(int64(d)*86400, 0).UTC().Format(time.DateOnly)
}
