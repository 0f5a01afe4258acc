package store_test

import (
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/testkit/curator"
)

type node struct {
	path, log string
	key       ed25519.PrivateKey
	reg       *registry.Registry
	now       time.Time
}

// newNode writes a signed registry with a one-entry log, as 3gs init
// does, valid for an hour from now.
func newNode(t *testing.T) *node {
	t.Helper()
	k := curator.New(t, "")
	n := &node{path: k.Registry, log: k.Log, key: k.Key, now: time.Now()}
	doc := curator.Doc()
	doc.Curator.Pubkey = k.Pub
	if _, err := store.Init(n.path, n.log, gen.EncodeRegistry(&doc), n.key, n.now, time.Hour); err != nil {
		t.Fatal(err)
	}
	var err error
	if n.reg, err = registry.LoadFile(n.path); err != nil {
		t.Fatal(err)
	}
	return n
}

func (n *node) openLog(t *testing.T) *auditlog.Log {
	t.Helper()
	l, _, err := store.OpenLog(store.LogOptions{Path: n.log, Key: curatorkey.Public(n.key), SHA256: n.reg.SHA256(), Covered: store.CoveredHead(n.path, n.reg, curatorkey.Public(n.key)), Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	return l.Log
}

// change is a Commit of a one-field edit of n's registry.
func (n *node) change(t *testing.T, l *auditlog.Log) (store.Commit, *registry.Registry) {
	t.Helper()
	doc := n.reg.Document()
	doc.Version = "1.0.1"
	next, err := registry.Load(gen.EncodeRegistry(&doc))
	if err != nil {
		t.Fatal(err)
	}
	return store.Commit{
		Path: n.path, Log: l, Entries: []*gen.AuditEntry{store.Entry(n.now, gen.AuditActionUpsert, "", "testing-things", n.reg, next)},
		Key: n.key, Now: n.now, Expires: n.now.Add(time.Hour), Data: next.Bytes(), Base: n.reg.Bytes(),
	}, next
}

func entries(t *testing.T, n *node) int {
	t.Helper()
	rep, err := auditlog.Read(n.log, auditlog.Options{Key: curatorkey.Public(n.key)})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Entries
}

func mustHold(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s changed", path)
	}
}

// block makes path a non-empty directory, so renaming a file onto it fails.
func block(t *testing.T, path string) {
	t.Helper()
	os.Remove(path)
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestCommitRecordsThenSigns(t *testing.T) {
	n := newNode(t)
	c, next := n.change(t, n.openLog(t))
	done, err := c.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if done.Head.Seq != 2 || entries(t, n) != 2 {
		t.Fatalf("head %v, %d entries; want seq 2 of 2", done.Head, entries(t, n))
	}
	mustHold(t, n.path, next.Bytes())
	st := signature.Check(next, done.Signature)
	if !st.Verified || st.Log == nil || *st.Log != done.Head {
		t.Fatalf("signature %+v does not cover head %v", st, done.Head)
	}
	// The next opening finds nothing to repair.
	n.reg = next
	if _, notes, err := store.OpenLog(store.LogOptions{Path: n.log, Key: curatorkey.Public(n.key), SHA256: next.SHA256(), Covered: st.Log, Repair: true}); err != nil || len(notes) > 0 {
		t.Fatalf("reopening: %v %v", notes, err)
	}
}

// A registry write that fails leaves the file as it was, and takes the
// entry back.
func TestCommitUndoesAFailedWrite(t *testing.T) {
	n := newNode(t)
	sig, _ := os.ReadFile(n.path + signature.Suffix)
	c, _ := n.change(t, n.openLog(t))
	block(t, n.path+".sig.next")
	_, err := c.Commit()
	var e *store.Error
	if !errors.As(err, &e) || e.InLog || e.Kept || e.UndoErr != nil {
		t.Fatalf("got %#v, want a logged, undone failure", err)
	}
	asBefore(t, n, 1, n.reg.Bytes(), sig)
}

// asBefore checks that a failed change left the log with its entries,
// the registry file with data and its signature with sig.
func asBefore(t *testing.T, n *node, want int, data, sig []byte) {
	t.Helper()
	if got := entries(t, n); got != want {
		t.Fatalf("%d entries after a failed change, want the %d before it", got, want)
	}
	mustHold(t, n.path, data)
	mustHold(t, n.path+signature.Suffix, sig)
}

// When the registry was replaced and only the signature's last rename
// failed, the entry stays: it records what is on disk.
func TestCommitKeepsTheEntryOfAReplacedRegistry(t *testing.T) {
	n := newNode(t)
	c, next := n.change(t, n.openLog(t))
	block(t, n.path+signature.Suffix)
	_, err := c.Commit()
	var e *store.Error
	if !errors.As(err, &e) || e.InLog || !e.Kept {
		t.Fatalf("got %#v, want a failure that keeps its entry", err)
	}
	if got := entries(t, n); got != 2 {
		t.Fatalf("%d entries, want 2", got)
	}
	mustHold(t, n.path, next.Bytes())
}

// A file edited since it was read is not overwritten.
func TestCommitRefusesAChangedFile(t *testing.T) {
	n := newNode(t)
	c, _ := n.change(t, n.openLog(t))
	edited := append(n.reg.Bytes(), '\n')
	if err := os.WriteFile(n.path, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := c.Commit()
	if !errors.Is(err, store.ErrChanged) {
		t.Fatalf("got %v, want ErrChanged", err)
	}
	if got := entries(t, n); got != 1 {
		t.Fatalf("%d entries, want 1", got)
	}
	mustHold(t, n.path, edited)
}

// A signature-only commit that fails takes its entries back.
func TestCommitSignatureOnlyUndoes(t *testing.T) {
	n := newNode(t)
	l := n.openLog(t)
	c := store.Commit{Path: n.path, Log: l, Entries: []*gen.AuditEntry{store.Entry(n.now, gen.AuditActionSign, "", "", n.reg, n.reg)}, Key: n.key, Now: n.now, Expires: n.now.Add(time.Hour), Base: n.reg.Bytes()}
	block(t, n.path+signature.Suffix)
	_, err := c.Commit()
	var e *store.Error
	if !errors.As(err, &e) || e.InLog || e.Kept {
		t.Fatalf("got %#v, want an undone failure", err)
	}
	if got := entries(t, n); got != 1 {
		t.Fatalf("%d entries, want 1", got)
	}
}

// The one crash-recovery path: entries a crash left after the signed
// head are moved to LOG.cut when the log is next opened to write.
func TestOpenLogCutsWhatACrashLeft(t *testing.T) {
	n := newNode(t)
	c, _ := n.change(t, n.openLog(t))
	// The crash: the entry is appended, the registry never written.
	if _, err := c.Log.Append(n.key, c.Entries...); err != nil {
		t.Fatal(err)
	}
	pub := curatorkey.Public(n.key)
	o := store.LogOptions{Path: n.log, Key: pub, SHA256: n.reg.SHA256(), Covered: store.CoveredHead(n.path, n.reg, pub)}
	if l, _, err := store.OpenLog(o); err != nil || l.Log != nil {
		t.Fatalf("checking without repair: %v, log open %v; want it checked and not open for appending", err, l != nil && l.Log != nil)
	}
	o.Repair = true
	l, notes, err := store.OpenLog(o)
	if err != nil || len(notes) != 1 || l.Log == nil || l.Head().Seq != 1 {
		t.Fatalf("repair: %v %v", notes, err)
	}
	if _, err := os.Stat(n.log + ".cut"); err != nil {
		t.Fatal(err)
	}
}

func TestFileChangeAndSign(t *testing.T) {
	n := newNode(t)
	f := store.File{Path: n.path, LogPath: n.log, Key: n.key, Validity: time.Hour, Limit: registry.MaxSize}
	ch, err := f.Change(n.reg, gen.AuditActionEndorse, false, func(doc *gen.Registry) error {
		doc.Endorsements = append(doc.Endorsements, gen.Endorsement{Pubkey: curatorkey.URI(make(ed25519.PublicKey, 32)), URL: "https://peer.example", Since: "2026-01-01"})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ch.Next.Version() != "1.0.1" || ch.Head.Seq != 2 {
		t.Fatalf("version %s, head %v", ch.Next.Version(), ch.Head)
	}
	// A hand edit that kept the version is signed under the next one.
	doc := ch.Next.Document()
	doc.Curator.Name = "Renamed"
	if err := os.WriteFile(n.path, gen.EncodeRegistry(&doc), 0o644); err != nil {
		t.Fatal(err)
	}
	edited, err := registry.LoadFile(n.path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.Sign(edited)
	if err != nil {
		t.Fatal(err)
	}
	if s.Reg.Version() != "1.0.2" || len(s.Entries) != 1 || s.Entries[0].Action != gen.AuditActionSign || s.Head.Seq != 3 {
		t.Fatalf("signed %s with %d entries at %v", s.Reg.Version(), len(s.Entries), s.Head)
	}
	data, doc2, _, err := signature.ReadPair(n.path, registry.MaxSize)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := signature.Verify(data, doc2, curatorkey.Public(n.key)); err != nil || v.Log == nil || v.Log.Seq != 3 {
		t.Fatalf("signature: %v %+v", err, v)
	}
	// A change the edit refuses changes nothing.
	want := errors.New("no")
	if _, err := f.Change(s.Reg, gen.AuditActionEndorse, false, func(*gen.Registry) error { return want }); err != want {
		t.Fatalf("got %v", err)
	}
	if got := entries(t, n); got != 3 {
		t.Fatalf("%d entries, want 3", got)
	}
}

func (n *node) editor() (*store.Editor, store.Served) {
	e := store.NewEditor(store.EditorConfig{Path: n.path, Key: n.key, AuditLog: n.log, Validity: time.Hour, Now: func() time.Time { return n.now }})
	data, doc, _ := signature.ReadSigned(n.path, registry.MaxSize)
	reg, _ := registry.Load(data)
	return e, store.Served{Registry: reg, Signature: signature.Check(reg, doc)}
}

func rename(doc *gen.Registry) error {
	doc.Curator.Name = "Renamed"
	return nil
}

// A server's change is recorded, written and signed; one whose write
// fails leaves the file, its signature and the log as they were, and says
// what failed.
func TestEditorChange(t *testing.T) {
	n := newNode(t)
	e, cur := n.editor()
	next, head, err := e.Change(cur, "ada", gen.AuditActionUpsert, "", nil, rename)
	if err != nil {
		t.Fatal(err)
	}
	if head.Seq != 2 {
		t.Fatalf("the change is recorded at seq %d, want 2", head.Seq)
	}
	if !next.Signature.Verified || next.Signature.Log == nil || next.Signature.Log.Seq != 2 || next.Registry.Version() != "1.0.1" || !next.Modified.Equal(n.now) {
		t.Fatalf("after the change: %s, %+v", next.Registry.Version(), next.Signature)
	}
	sig, _ := os.ReadFile(n.path + signature.Suffix)
	block(t, n.path+".sig.next")
	_, _, err = e.Change(next, "ada", gen.AuditActionUpsert, "", nil, rename)
	if err == nil || !strings.HasPrefix(err.Error(), "writing "+n.path+": ") {
		t.Fatalf("got %v, want a failed write", err)
	}
	asBefore(t, n, 2, next.Registry.Bytes(), sig)
}

// A hand edit is refused by a change, and recorded and signed by Reload
// (3gs sign with a server running).
func TestEditorReloadSignsAHandEdit(t *testing.T) {
	n := newNode(t)
	e, cur := n.editor()
	doc := cur.Registry.Document()
	doc.Curator.Name = "By hand"
	data := gen.EncodeRegistry(&doc)
	if err := os.WriteFile(n.path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Change(cur, "", gen.AuditActionUpsert, "", nil, rename); err == nil || !strings.Contains(err.Error(), "changed on disk") {
		t.Fatalf("got %v, want the hand edit refused", err)
	}
	reg, _ := registry.Load(data)
	st, err := e.Reload(n.now, "", reg, data, nil, signature.Status{})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Verified || st.Log == nil || st.Log.Seq != 2 || entries(t, n) != 2 {
		t.Fatalf("after reload: %+v, %d entries", st, entries(t, n))
	}
	if head, err := e.Served(store.Served{Registry: reg, Signature: st}); err != nil || head != *st.Log {
		t.Fatalf("served head %v %v", head, err)
	}
}

// Renew signs the same bytes again, covering the same head, once the
// signature is past half its life.
func TestEditorRenew(t *testing.T) {
	n := newNode(t)
	e, cur := n.editor()
	if _, signed, err := e.Renew(cur); err != nil || signed {
		t.Fatalf("renewed a fresh signature: %v %v", signed, err)
	}
	n.now = n.now.Add(40 * time.Minute)
	next, signed, err := e.Renew(cur)
	if err != nil || !signed {
		t.Fatalf("not renewed: %v", err)
	}
	if !next.Signature.Verified || *next.Signature.Log != *cur.Signature.Log || !next.Signature.Expires.After(cur.Signature.Expires) {
		t.Fatalf("renewed signature %+v", next.Signature)
	}
	mustHold(t, n.path, cur.Registry.Bytes())
}

// A server keeps the span its curator chose (3gs sign --expires 72h),
// whatever its own --expires: a 72-hour signature is not renewed while more
// than 36 hours are left, and when renewed, or re-signed after a change,
// the new signature vouches for 72 hours again, not the server's 30 days.
func TestEditorKeepsTheCuratorsSpan(t *testing.T) {
	const span = 72 * time.Hour
	n := newNode(t)
	c := store.Commit{Path: n.path, Log: n.openLog(t), Entries: []*gen.AuditEntry{store.Entry(n.now, gen.AuditActionSign, "", "", n.reg, n.reg)}, Key: n.key, Now: n.now, Expires: n.now.Add(span), Base: n.reg.Bytes()}
	if _, err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	e, cur := n.editor()
	e.Validity = 0 // the server's default, signature.DefaultValidity
	if got := cur.Signature.Expires.Sub(cur.Signature.SignedAt); got != span {
		t.Fatalf("the curator's signature spans %v, want %v", got, span)
	}
	sig, _ := os.ReadFile(n.path + signature.Suffix)
	if _, signed, err := e.Renew(cur); err != nil || signed {
		t.Fatalf("a 72-hour signature with 72 hours left was renewed (signed %v, %v)", signed, err)
	}
	mustHold(t, n.path+signature.Suffix, sig)
	n.now = n.now.Add(40 * time.Hour)
	next, signed, err := e.Renew(cur)
	if err != nil || !signed {
		t.Fatalf("not renewed with 32 of 72 hours left: %v", err)
	}
	if got := next.Signature.Expires.Sub(next.Signature.SignedAt); !next.Signature.Verified || got != span {
		t.Fatalf("the renewed signature spans %v, want the curator's %v", got, span)
	}
	changed, _, err := e.Change(next, "ada", gen.AuditActionUpsert, "", nil, rename)
	if err != nil {
		t.Fatal(err)
	}
	if got := changed.Signature.Expires.Sub(changed.Signature.SignedAt); got != span {
		t.Fatalf("the signature after a change spans %v, want the curator's %v", got, span)
	}
}
