package cli

import (
	"bufio"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/peer"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/safefile"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/store"
)

// Doctor's checks of what changing the registry needs: the folders, the
// audit log, and what peers and replicas accept of the result.

// editing checks what the curator tools need to change the registry.
func (d *doctor) editing(reg *registry.Registry, key []byte) {
	path := d.o.registry
	if path == "" || reg == nil {
		return
	}
	audit := d.o.auditLog
	if audit == "" {
		audit = path + ".audit.jsonl"
	}
	dir := filepath.Dir(path)
	if !store.CanCreateIn(dir) {
		d.add(warn, "editing", "cannot write in "+dir+", so upsert_category and remove_category will fail", "let the user that runs 3gs write there, or leave the curator tools unused")
		return
	}
	if !store.CanCreateIn(filepath.Dir(audit)) {
		d.add(fail, "editing", "cannot write the audit log "+audit+", so every registry change will be refused", "choose a writable --audit-log (THREEGS_AUDIT_LOG)")
		return
	}
	d.auditLog(reg, path, audit)
	d.publish(reg, audit)
	if _, named := reg.CuratorKey(); named && key == nil {
		d.add(warn, "editing", "the registry is signed by its curator but no key is configured, so the curator tools cannot change it", "add --key-file KEY (THREEGS_KEY_FILE) to edit through the server")
		return
	}
	d.add(ok, "editing", "the curator tools can write "+path+" and the audit log "+audit, "")
}

// auditLog checks the audit log as serve does when it starts: it must
// verify under the curator key and end at the head the registry's
// signature covers.
func (d *doctor) auditLog(reg *registry.Registry, path, audit string) {
	doc, err := signature.ReadLimited(path+signature.Suffix, signature.MaxSize, "signature file")
	if err != nil {
		doc = nil
	}
	st := signature.Check(reg, doc)
	pub, _ := reg.CuratorKey()
	var covered *auditlog.Head
	o := auditlog.Options{Key: pub}
	if st.Verified && st.Log != nil {
		covered, o.Mark = st.Log, st.Log.Seq
	}
	rep, err := auditlog.Read(audit, o)
	var fit *auditlog.Fit
	if err == nil {
		fit, err = auditlog.Match(rep, reg.SHA256(), covered)
	}
	verify := "3gs audit verify --audit-log " + signature.ShellQuote(audit) + " " + signature.ShellQuote(path)
	switch {
	case errors.Is(err, auditlog.ErrLegacy):
		d.add(fail, "audit log", audit+" is in the old, unsigned format, and serve refuses it", "3gs audit migrate --key-file KEY --audit-log "+signature.ShellQuote(audit)+" "+signature.ShellQuote(path))
	case errors.Is(err, auditlog.ErrMissing):
		d.add(fail, "audit log", audit+": "+err.Error()+"; serve refuses to start", auditlog.MissingFix(audit, path))
	case err != nil:
		d.add(fail, "audit log", audit+" does not verify: "+err.Error(), verify+" shows the whole log; restore it from a backup, or move it aside to start a new one")
	case rep.Entries == 0:
		d.add(ok, "audit log", audit+" does not exist yet; the first change starts it", "")
	case fit.Pending > 0 || rep.Torn > 0:
		d.add(warn, "audit log", fmt.Sprintf("%s holds what an interrupted change left (%d entries after the signed head, %d bytes of a partial line); serve removes it when it starts", audit, fit.Pending, rep.Torn), "")
	default:
		signed := "unsigned"
		if rep.Signed() {
			signed = fmt.Sprintf("signed from seq %d", rep.FirstSigned)
		}
		d.add(ok, "audit log", fmt.Sprintf("%s verifies: %d entries, %s, head %s", audit, rep.Entries, signed, rep.Head), "")
	}
}

// publish checks what the registry's readers check before they take it:
// endorsing peers and read replicas refuse a version they already hold
// with other content, a registry shaped to cost them far more than it
// holds, and one over their byte limit. On the origin these are found
// before every replica and peer stops following, saying so only in
// their own logs.
func (d *doctor) publish(reg *registry.Registry, audit string) {
	if _, named := reg.CuratorKey(); !named {
		return // unsigned: no peer or replica takes it anyway
	}
	if err := peer.CheckShape(reg.Bytes()); err != nil {
		d.add(fail, "publish", "endorsing peers and replicas refuse this registry: "+err.Error(), "write it as 3gs writes it (compact or plainly indented), then sign it again")
		return
	}
	if n := int64(reg.Size()); n > int64(defaultPeerMaxBytes) {
		d.add(warn, "publish", fmt.Sprintf("the registry is %d bytes: peers and replicas with the default --peer-max-bytes (%d) refuse it", n, int64(defaultPeerMaxBytes)), "ask those who read it to raise --peer-max-bytes (THREEGS_PEER_MAX_BYTES), or split the registry")
		return
	}
	if seq := sameVersionOtherBytes(audit, reg); seq > 0 {
		d.add(fail, "publish", fmt.Sprintf("the audit log recorded version %s with other content at seq %d; peers and replicas that took that copy refuse this one (\"version %s again with different content\") and keep the old one", reg.Version(), seq, reg.Version()),
			"give it a higher version: 3gs sign raises it when the registry changed since the log last recorded its version; or set \"version\" by hand and sign")
		return
	}
	d.add(ok, "publish", "peers and replicas can take it: version "+reg.Version()+" names these bytes alone in the audit log, and its size and shape are within what they accept", "")
}

// sameVersionOtherBytes is the seq of an entry of the log at path that
// records reg's version with other bytes, or 0. Lines that do not decode
// are skipped: the log check above reports them.
func sameVersionOtherBytes(path string, reg *registry.Registry) int {
	f, _, err := safefile.Open(path, 1<<30, "audit log")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		e, err := gen.DecodeAuditEntry(sc.Bytes())
		if err == nil && e.Version == reg.Version() && e.After != reg.SHA256() {
			return e.Seq
		}
	}
	return 0
}
