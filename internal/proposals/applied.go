package proposals

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/safefile"
)

// AppliedIn looks in the audit log at logPath for the change accepting
// proposal id made: the entry whose actor is Actor(id, …). A crash (or a
// failed write of the proposals file) between writing that change and
// recording the decision leaves the proposal pending with its change in
// the registry; the caller then records the decision with the version
// found here instead of applying the change twice. found is false when
// no entry names the proposal, or there is no log.
func AppliedIn(logPath, id string) (version string, found bool, err error) {
	f, _, err := safefile.Open(logPath, auditlog.MaxSize, "audit log")
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("reading the audit log for proposal %s: %w", id, err)
	}
	defer f.Close()
	// The actor as the encoder writes it: an id needs no escaping.
	prefix := actorPrefix(id)
	mark := []byte(`"actor":"` + prefix)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), auditlog.MaxLine+1)
	for sc.Scan() {
		if !bytes.Contains(sc.Bytes(), mark) {
			continue
		}
		e, err := gen.DecodeAuditEntry(sc.Bytes())
		if err != nil || !strings.HasPrefix(e.Actor, prefix) {
			continue // another member quoting the words, or a legacy line
		}
		version, found = e.Version, true
	}
	if err := sc.Err(); err != nil {
		return "", false, fmt.Errorf("reading the audit log %s for proposal %s: %w", logPath, id, err)
	}
	return version, found, nil
}
