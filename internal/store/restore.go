package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/signature"
)

// errCovered stops reading a log copy at the head the registry's
// signature covers: entries past it are not part of what was signed.
var errCovered = errors.New("reached the head the signature covers")

// RestoreLog puts back the audit log of the registry at regPath, missing
// at logPath, from a copy read from r: the log as published elsewhere
// (beside the registry on a static host, or a node's /audit). The copy is
// trusted for nothing: it is restored only when the registry's own
// signature verifies under the curator key it names and covers a log
// head, and the copy is that log from its first entry to that head, every
// entry checking out (hash chain, curator signatures) and the head
// recording this registry. Entries past the head are left out. The file
// is written whole or not at all, and never over an existing one.
func RestoreLog(regPath, logPath string, r io.Reader) (auditlog.Head, error) {
	data, doc, err := signature.ReadSigned(regPath, registry.MaxSize)
	if err != nil {
		return auditlog.Head{}, err
	}
	reg, err := registry.Load(data)
	if err != nil {
		return auditlog.Head{}, fmt.Errorf("%s: %w", regPath, err)
	}
	st := signature.Check(reg, doc)
	key, _ := reg.CuratorKey()
	switch {
	case !st.Verified:
		return auditlog.Head{}, fmt.Errorf("the signature of %s does not verify (%v), so nothing says which log belongs to it; restore the registry and its signature first", regPath, st.Problem)
	case st.Log == nil:
		return auditlog.Head{}, fmt.Errorf("the signature of %s covers no audit log head, so no copy can be checked against it; start a new log with 3gs audit migrate %s", regPath, regPath)
	}
	if _, err := os.Lstat(logPath); err == nil {
		return auditlog.Head{}, fmt.Errorf("%s exists: %w; a log is restored only where there is none (move it aside first, after 3gs audit verify %s says what is wrong with it)", logPath, fs.ErrExist, regPath)
	}
	covered := *st.Log
	var rep *auditlog.Report
	// The copy is checked as it is written to a temporary file, which
	// becomes the log (a hard link, which never replaces a file that
	// appeared meanwhile) only once every entry and the head checked out.
	err = safefile.CreateFrom(logPath, logMode, func(w io.Writer) error {
		var err error
		rep, err = auditlog.Verify(r, auditlog.Options{Key: key, Mark: covered.Seq, Each: func(e *gen.AuditEntry, line []byte) error {
			if _, err := w.Write(append(line, '\n')); err != nil {
				return err
			}
			if e.Seq == covered.Seq {
				return errCovered
			}
			return nil
		}})
		var p *auditlog.Problem
		switch {
		case err == nil || errors.Is(err, errCovered):
		case errors.As(err, &p) || errors.Is(err, auditlog.ErrLegacy):
			return fmt.Errorf("the copy is not this registry's log: %w", err)
		default:
			// Not what the copy says, but failing to read it: the
			// network, a bound.
			return fmt.Errorf("reading the copy: %w", err)
		}
		if _, err := auditlog.Match(rep, reg.SHA256(), &covered); err != nil {
			return fmt.Errorf("the copy is not this registry's log: %w", err)
		}
		return nil
	})
	if err != nil {
		return auditlog.Head{}, err
	}
	return rep.Head, nil
}

// logMode is the mode of an audit log the store creates, as
// auditlog.Log.Append makes it.
const logMode = 0o600
