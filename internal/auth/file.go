package auth

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/safefile"
)

// FileMode is the tokens file's mode: hashes are not tokens, but the file
// also says who holds which tier, which is nobody else's business.
const FileMode = 0o600

// Add makes a token named name for tier, records its hash in the tokens file
// at path (creating the file if needed) and returns the token, which is
// never stored and cannot be shown again.
func Add(path, name string, tier gen.Tier, now time.Time) (string, error) {
	if tier != gen.TierUser && tier != gen.TierAdmin {
		return "", fmt.Errorf("a token's tier is user or admin, not %s", tier)
	}
	token, err := NewToken()
	if err != nil {
		return "", err
	}
	err = update(path, func(doc *gen.Tokens) error {
		for _, t := range doc.Tokens {
			if t.Name == name {
				return fmt.Errorf("a token named %q already exists; revoke it first or choose another name", name)
			}
		}
		doc.Tokens = append(doc.Tokens, gen.Token{Name: name, Tier: gen.TokenTier(tier.String()), SHA256: Hash(token), Created: now.Truncate(time.Second)})
		return nil
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// Revoke removes the token named name from the tokens file at path.
func Revoke(path, name string) error {
	return update(path, func(doc *gen.Tokens) error {
		i := slices.IndexFunc(doc.Tokens, func(t gen.Token) bool { return t.Name == name })
		if i < 0 {
			return fmt.Errorf("no token named %q in %s; 3gs token list shows the names", name, path)
		}
		doc.Tokens = slices.Delete(doc.Tokens, i, i+1)
		return nil
	})
}

// update applies change to the tokens file under an exclusive lock, so two
// `3gs token` commands at once cannot lose each other's change, and writes
// the result atomically. The file is checked before and after.
func update(path string, change func(*gen.Tokens) error) error {
	lock, err := lockTokens(path)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	doc, err := ReadFile(path)
	if err != nil {
		return err
	}
	if err := change(doc); err != nil {
		return err
	}
	data := gen.EncodeTokens(doc)
	if _, err := gen.DecodeTokens(data); err != nil {
		return fmt.Errorf("refusing to write an invalid tokens file: %w", err)
	}
	return safefile.Write(path, data, FileMode)
}

// lockWait bounds how long a token command waits for another one to
// finish: each holds the lock for one read and one write of a small file,
// so a wait this long means a stuck process, which the error names.
const lockWait = 30 * time.Second

// lockTokens takes the lock on the tokens file (PATH.lock), waiting while
// another token command holds it. It goes through internal/safefile, the
// registry's lock, rather than calling flock itself, so 3gs builds for
// Windows too, where safefile's lock is a no-op and one writer at a time
// is up to the operator. safefile.TryLock only tries, so waiting is a retry loop.
func lockTokens(path string) (*safefile.Lock, error) {
	deadline := time.Now().Add(lockWait)
	for {
		lock, err := safefile.TryLock(path)
		if err == nil || !errors.Is(err, safefile.ErrHeld) || time.Now().After(deadline) {
			return lock, err
		}
		time.Sleep(5 * time.Millisecond)
	}
}
