package httpserver

import (
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/signature"
)

// maxSessionSecretFile bounds a session secret file: 64 hex characters
// are enough, and nothing near this size is a secret written by hand.
const maxSessionSecretFile = 4 << 10

// MakeSessionSecret is the shell command that writes a session secret to
// path: 32 random bytes as 64 hex characters, readable by its owner only.
func MakeSessionSecret(path string) string {
	return "(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n' > " + signature.ShellQuote(path) + ")"
}

// ReadSessionSecret reads the secret replicas share to sign session ids:
// a regular file holding hex characters (64 or more, that is at least
// MinSessionSecretBytes bytes; case and surrounding white space do not
// matter), readable by its owner only. Hex rather than raw bytes, so the
// file survives editors, copy and paste and configuration systems that
// would mangle a stray newline or a NUL. Each refusal says how to fix it.
func ReadSessionSecret(path string) ([]byte, error) {
	data, st, err := safefile.ReadStat(path, maxSessionSecretFile, "session secret file")
	if errors.Is(err, safefile.ErrTooLarge) {
		return nil, fmt.Errorf("%s is not a session secret file: it holds one line of 64 hex characters; make one with: %s", path, MakeSessionSecret(path))
	}
	if err != nil {
		return nil, fmt.Errorf("%w; make one with: %s", err, MakeSessionSecret(path))
	}
	// Anyone who can read the secret can forge session ids that every
	// replica accepts. Windows permissions are ACLs that the mode bits Go
	// reports do not reflect, so the check would refuse every file there.
	if mode := st.Mode().Perm(); mode&0o077 != 0 && runtime.GOOS != "windows" {
		return nil, fmt.Errorf("%s has mode %04o, so other users may read the session secret and forge session ids; run: chmod 600 %s", path, mode, signature.ShellQuote(path))
	}
	text := strings.TrimSpace(string(data))
	secret, err := hex.DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("%s is not a session secret file: it must hold hex characters only (64 or more); make one with: %s", path, MakeSessionSecret(path))
	}
	if len(secret) < MinSessionSecretBytes {
		return nil, fmt.Errorf("%s holds a session secret of %d bytes (%d hex characters); at least %d bytes (%d hex characters) are needed; make one with: %s",
			path, len(secret), len(text), MinSessionSecretBytes, 2*MinSessionSecretBytes, MakeSessionSecret(path))
	}
	return secret, nil
}
