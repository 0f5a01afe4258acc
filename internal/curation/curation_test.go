package curation_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/curation"
	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/proposals"
	"github.com/three-good-sources/3gs/internal/registry"
	"github.com/three-good-sources/3gs/internal/signature"
	"github.com/three-good-sources/3gs/internal/store"
	"github.com/three-good-sources/3gs/internal/strictjson"
	"github.com/three-good-sources/3gs/internal/testkit/curator"
)

// served is a server's state as the tools keep it: what is served, and
// how many times a node published.
type served struct {
	cur       store.Served
	published int
}

func (s *served) Current() store.Served { return s.cur }
func (s *served) Publish(next store.Served) {
	s.cur = next
	s.published++
}

// server is a node serving the signed registry of a new curator (the
// frozen curator.Doc, with its audit log), holding the curator's key.
func server(t *testing.T) (*curation.Node, *served, *curator.Node) {
	t.Helper()
	c := curator.Signed(t)
	data, sig, err := signature.ReadSigned(c.Registry, registry.MaxSize)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	s := &served{cur: store.Served{Registry: reg, Signature: signature.Check(reg, sig)}}
	if !s.cur.Signature.Verified {
		t.Fatalf("the curator's registry does not verify: %v", s.cur.Signature.Problem)
	}
	n := curation.NewServer(store.EditorConfig{Path: c.Registry, Key: c.Key, AuditLog: c.Log}, s)
	return n, s, c
}

// command is the node of a command changing the same kind of registry
// file with the curator's key.
func command(t *testing.T) (*curation.Node, *curator.Node) {
	t.Helper()
	c := curator.Signed(t)
	return curation.NewFile(fileOf(c)), c
}

func fileOf(c *curator.Node) store.File {
	return store.File{Path: c.Registry, LogPath: c.Log, Key: c.Key, Validity: 24 * time.Hour, Limit: registry.MaxSize}
}

// withProposals opens the proposals file beside the registry at path for n.
func withProposals(t *testing.T, n *curation.Node, path string) *proposals.File {
	t.Helper()
	s, _, err := proposals.Open(proposals.PathFor(path), proposals.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	n.SetProposals(s)
	return s
}

// category is a valid category distinct from curator.Doc's.
func category(name, host string) gen.Category {
	src := func(rank int, url string) gen.Source {
		return gen.Source{Rank: rank, Name: "Source " + url, URL: url, Type: gen.SourceTypeDocumentation, Why: "A test source that explains the topic well enough for this test to use it."}
	}
	return gen.Category{
		Name: name, Description: "A category these tests add, describing nothing in particular at some length.",
		QueryPatterns: []string{"how to learn " + strings.ToLower(name), strings.ToLower(name) + " basics", strings.ToLower(name) + " for beginners"},
		Sources:       []gen.Source{src(1, "https://a."+host+"/"), src(2, "https://b."+host+"/"), src(3, "https://c."+host+"/")},
	}
}

// propose records a proposal to add the category slug.
func propose(t *testing.T, s *proposals.File, slug string) string {
	t.Helper()
	c := category("Proposed "+slug, slug+".example")
	p, err := s.Add(gen.ProposalRecord{Action: gen.ProposalActionAddCategory, Slug: slug, Category: &c, Reason: "No category covers it."})
	if err != nil {
		t.Fatal(err)
	}
	return p.ID
}

// onDisk is the registry file, its signature and its audit log.
func onDisk(t *testing.T, c *curator.Node) (reg, sig, log []byte) {
	t.Helper()
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return read(c.Registry), read(c.Registry + signature.Suffix), read(c.Log)
}

// verified loads the registry file and checks its signature and log:
// they must agree, the signature naming the log's last entry.
func verified(t *testing.T, c *curator.Node) (*registry.Registry, auditlog.Head) {
	t.Helper()
	data, sig, err := signature.ReadSigned(c.Registry, registry.MaxSize)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	st := signature.Check(reg, sig)
	if !st.Verified || st.Log == nil {
		t.Fatalf("the file's signature: %+v", st)
	}
	rep, err := auditlog.Read(c.Log, auditlog.Options{Key: curatorkey.Public(c.Key)})
	if err != nil {
		t.Fatal(err)
	}
	last := rep.Last
	if last.Seq != st.Log.Seq || last.After != reg.SHA256() {
		t.Fatalf("the log ends at seq %d (after %.12s), the signature names seq %d of %.12s", last.Seq, last.After, st.Log.Seq, reg.SHA256())
	}
	return reg, *st.Log
}

// lastEntry is the audit log's last entry.
func lastEntry(t *testing.T, c *curator.Node) *gen.AuditEntry {
	t.Helper()
	rep, err := auditlog.Read(c.Log, auditlog.Options{Key: curatorkey.Public(c.Key)})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Last
}

func TestUpsertCategoryWritesRecordsAndPublishes(t *testing.T) {
	n, s, c := server(t)
	done, err := n.UpsertCategory("ada", "new-topic", category("New topic", "new.example"))
	if err != nil {
		t.Fatal(err)
	}
	reg, head := verified(t, c)
	if !done.Created || s.published != 1 || s.cur.Registry.SHA256() != reg.SHA256() || done.Head != head || head.Seq != 2 {
		t.Fatalf("created %v, published %d times, served %.12s, file %.12s, head %+v of %+v", done.Created, s.published, s.cur.Registry.SHA256(), reg.SHA256(), done.Head, head)
	}
	if _, ok := reg.Category("new-topic"); !ok || reg.Version() != "1.0.1" {
		t.Errorf("the file is version %s, new-topic there: %v", reg.Version(), ok)
	}
}

func TestUpsertCategoryRefusesItsOwnProblemsAtTheArgument(t *testing.T) {
	n, s, c := server(t)
	reg, sig, log := onDisk(t, c)
	cat := category("Bad topic", "bad.example")
	cat.Sources[1].URL = cat.Sources[0].URL
	_, err := n.UpsertCategory("ada", "bad-topic", cat)
	var errs strictjson.Errors
	if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Path != "category.sources[1].url" {
		t.Fatalf("got %v, want the duplicate URL at category.sources[1].url", err)
	}
	if s.published != 0 {
		t.Error("a refused change was published")
	}
	unchanged(t, c, reg, sig, log)
}

func TestRemoveCategoryKeepsTheLastOne(t *testing.T) {
	n, s, c := server(t)
	reg, sig, log := onDisk(t, c)
	_, err := n.RemoveCategory("ada", "testing-things")
	var errs strictjson.Errors
	if !errors.As(err, &errs) || errs[0].Path != "slug" || !strings.Contains(errs[0].Reason, "only category") {
		t.Fatalf("got %v, want the last category kept", err)
	}
	if s.published != 0 {
		t.Error("a refused change was published")
	}
	unchanged(t, c, reg, sig, log)
}

// unchanged fails unless the registry file, its signature and its log
// hold what they held.
func unchanged(t *testing.T, c *curator.Node, reg, sig, log []byte) {
	t.Helper()
	r, s, l := onDisk(t, c)
	if !bytes.Equal(r, reg) || !bytes.Equal(s, sig) || !bytes.Equal(l, log) {
		t.Errorf("changed: registry %v, signature %v, log %v", !bytes.Equal(r, reg), !bytes.Equal(s, sig), !bytes.Equal(l, log))
	}
}

func TestFailedWriteLeavesFileSignatureAndServedStateAsTheyWere(t *testing.T) {
	n, s, c := server(t)
	reg, sig, log := onDisk(t, c)
	before := s.cur
	// The signature's temporary file cannot be made: a directory is in
	// its place.
	if err := os.MkdirAll(filepath.Join(c.Registry+".sig.next", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := n.UpsertCategory("ada", "new-topic", category("New topic", "new.example")); err == nil {
		t.Fatal("the change was written")
	}
	if s.published != 0 || s.cur.Registry != before.Registry || s.cur.Signature.SignedAt != before.Signature.SignedAt {
		t.Error("a failed change was published")
	}
	unchanged(t, c, reg, sig, log)
}

func TestAServerWithoutTheKeyDoesNotBreakTheSignature(t *testing.T) {
	_, s, c := server(t)
	n := curation.NewServer(store.EditorConfig{Path: c.Registry, AuditLog: c.Log}, s)
	_, err := n.UpsertCategory("ada", "new-topic", category("New topic", "new.example"))
	var ke *store.KeyNeededError
	if !errors.As(err, &ke) || ke.Log {
		t.Fatalf("got %v, want a *store.KeyNeededError for the registry", err)
	}
}

func TestAcceptAppliesAndRecords(t *testing.T) {
	n, s, c := server(t)
	props := withProposals(t, n, c.Registry)
	id := propose(t, props, "proposed-topic")
	done, err := n.Accept("root", id, "useful")
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := verified(t, c)
	if !done.Changed || done.Recovered || done.Version != reg.Version() || !done.Signed || s.cur.Registry.SHA256() != reg.SHA256() {
		t.Fatalf("accept = %+v; file version %s", done, reg.Version())
	}
	if e := lastEntry(t, c); e.Actor != proposals.Actor(id, "root") || e.Slug == nil || *e.Slug != "proposed-topic" {
		t.Errorf("the log's last entry: actor %q, slug %v", e.Actor, e.Slug)
	}
	p, _ := props.Get(id)
	if p.Status != gen.ProposalStatusAccepted || text(p.Decision.Version) != reg.Version() || text(p.Decision.Reason) != "useful" {
		t.Errorf("the proposal: %s, %+v", p.Status, p.Decision)
	}
}

// A crash after the change and before the decision: the audit log
// names the proposal, the proposals file still reads pending. Accepting
// again records the decision only. The command's node and the server's
// take the same path; this is the command's.
func TestAcceptAfterACrashRecordsOnly(t *testing.T) {
	n, c := command(t)
	props := withProposals(t, n, c.Registry)
	id := propose(t, props, "proposed-topic")
	p, _ := props.Get(id)
	crashed := fileOf(c)
	crashed.Actor = proposals.Actor(id, store.Actor)
	if _, err := curation.NewFile(crashed).UpsertCategory(crashed.Actor, p.Slug, *p.Category); err != nil {
		t.Fatal(err)
	}
	reg, sig, log := onDisk(t, c)
	applied, _ := verified(t, c)

	done, err := n.Accept(store.Actor, id, "")
	if err != nil {
		t.Fatal(err)
	}
	if !done.Recovered || done.Change != nil || done.Version != applied.Version() {
		t.Fatalf("accept = %+v, want the change found in the log at %s", done, applied.Version())
	}
	unchanged(t, c, reg, sig, log)
	if p, _ := props.Get(id); p.Status != gen.ProposalStatusAccepted || text(p.Decision.Version) != applied.Version() {
		t.Errorf("the proposal: %s, %+v", p.Status, p.Decision)
	}
}

func TestAcceptOfAProposalThatNoLongerAppliesStaysPending(t *testing.T) {
	n, s, c := server(t)
	props := withProposals(t, n, c.Registry)
	id := propose(t, props, "proposed-topic")
	if _, err := n.UpsertCategory("ada", "proposed-topic", category("Added by hand", "hand.example")); err != nil {
		t.Fatal(err)
	}
	reg, sig, log := onDisk(t, c)
	published := s.published
	_, err := n.Accept("root", id, "")
	var ae *curation.AcceptError
	if !errors.As(err, &ae) || ae.Step != curation.StepApply || !strings.Contains(err.Error(), "already") {
		t.Fatalf("got %v, want the proposal refused as no longer applying", err)
	}
	if p, _ := props.Get(id); p.Status != gen.ProposalStatusPending {
		t.Errorf("the proposal is %s, want pending", p.Status)
	}
	if s.published != published {
		t.Error("a refused accept published")
	}
	unchanged(t, c, reg, sig, log)
}

func TestRejectBySelection(t *testing.T) {
	n, c := command(t)
	props := withProposals(t, n, c.Registry)
	a, b := propose(t, props, "topic-a"), propose(t, props, "topic-b")
	reg, sig, log := onDisk(t, c)
	ids, err := n.Reject(store.Actor, proposals.Selection{AllPending: true}, "out of scope")
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 2 || !(ids[0] == a && ids[1] == b || ids[0] == b && ids[1] == a) {
		t.Fatalf("rejected %v, want %s and %s", ids, a, b)
	}
	for _, id := range ids {
		if p, _ := props.Get(id); p.Status != gen.ProposalStatusRejected || text(p.Decision.Reason) != "out of scope" {
			t.Errorf("%s: %s, %+v", id, p.Status, p.Decision)
		}
	}
	unchanged(t, c, reg, sig, log)
}

func TestDecisionsNeedAProposalsStore(t *testing.T) {
	n, _ := command(t)
	if _, err := n.Accept(store.Actor, "p0123456789abcdef", ""); !errors.Is(err, curation.ErrNoProposals) {
		t.Errorf("accept: %v", err)
	}
	if _, err := n.Reject(store.Actor, proposals.Selection{AllPending: true}, "x"); !errors.Is(err, curation.ErrNoProposals) {
		t.Errorf("reject: %v", err)
	}
}

func TestEndorseAddsSignedAndRecorded(t *testing.T) {
	n, c := command(t)
	other := curator.New(t, "other")
	done, err := n.Endorse(curation.Endorsement{Pubkey: other.Pub, URL: "https://other.example", Since: "2026-02-03"})
	if err != nil {
		t.Fatal(err)
	}
	reg, head := verified(t, c)
	e := reg.Endorsements()
	if done.Kind != curation.Added || len(e) != 1 || e[0].Pubkey != other.Pub || e[0].Since != "2026-02-03" || head.Seq != 2 || done.Head != head {
		t.Fatalf("endorse = %+v; the file endorses %+v, head %+v", done, e, head)
	}
	if last := lastEntry(t, c); last.Action != gen.AuditActionEndorse {
		t.Errorf("the log's last entry is a %s", last.Action)
	}
}

func TestEndorseAsAskedAlreadyWritesNothing(t *testing.T) {
	n, c := command(t)
	other := curator.New(t, "other")
	x := curation.Endorsement{Pubkey: other.Pub, URL: "https://other.example", Since: "2026-02-03"}
	if _, err := n.Endorse(x); err != nil {
		t.Fatal(err)
	}
	reg, sig, log := onDisk(t, c)
	_, err := n.Endorse(x)
	var un *curation.UnchangedError
	if !errors.As(err, &un) || un.Endorsement.URL != x.URL {
		t.Fatalf("got %v, want *curation.UnchangedError", err)
	}
	unchanged(t, c, reg, sig, log)
}

func TestEndorseRefusesTheOwnCurator(t *testing.T) {
	n, c := command(t)
	_, err := n.Endorse(curation.Endorsement{Pubkey: c.Pub, URL: "https://self.example"})
	var own *curation.OwnCuratorError
	if !errors.As(err, &own) {
		t.Fatalf("got %v, want *curation.OwnCuratorError", err)
	}
}

func TestSignRecordsAndRaisesAHandEdit(t *testing.T) {
	n, c := command(t)
	doc := curator.Doc()
	doc.Curator.Pubkey, doc.Curator.Name = c.Pub, "Edited by hand"
	if err := os.WriteFile(c.Registry, gen.EncodeRegistry(&doc), 0o644); err != nil {
		t.Fatal(err)
	}
	edited, err := registry.LoadFile(c.Registry)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := n.Sign(edited)
	if err != nil {
		t.Fatal(err)
	}
	reg, head := verified(t, c)
	if reg.Version() != "1.0.1" || reg.Curator().Name != "Edited by hand" || signed.Head != head || len(signed.Entries) != 1 {
		t.Fatalf("signed %+v; the file is version %s by %q, head %+v", signed, reg.Version(), reg.Curator().Name, head)
	}
}

func TestSignRefusesAnotherCuratorsKey(t *testing.T) {
	_, c := command(t)
	reg, sig, log := onDisk(t, c)
	f := fileOf(c)
	f.Key = curator.New(t, "other").Key
	loaded, err := registry.LoadFile(c.Registry)
	if err != nil {
		t.Fatal(err)
	}
	_, err = curation.NewFile(f).Sign(loaded)
	var we *curation.WrongKeyError
	if !errors.As(err, &we) || we.Curator != c.Pub {
		t.Fatalf("got %v, want *curation.WrongKeyError naming %s", err, c.Pub)
	}
	unchanged(t, c, reg, sig, log)
}

func TestApplyRedirectsMovesTheSourceAndSaysWhy(t *testing.T) {
	n, c := command(t)
	done, err := n.ApplyRedirects("testing-things", []curation.Move{{Rank: 2, From: "https://two.example/", To: "https://two.example/new"}}, "redirect: seen")
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := verified(t, c)
	cat, _ := reg.Category("testing-things")
	if cat.Sources[1].URL != "https://two.example/new" || done.New.Registry.SHA256() != reg.SHA256() {
		t.Fatalf("source 2 is at %s", cat.Sources[1].URL)
	}
	if e := lastEntry(t, c); e.Detail == nil || *e.Detail != "redirect: seen" {
		t.Errorf("the entry's detail: %v", e.Detail)
	}
}

func TestReloadServesTheCuratorsSignedFile(t *testing.T) {
	n, s, c := server(t)
	// The curator signs a new version with 3gs sign (a command's node).
	doc := curator.Doc()
	doc.Curator.Pubkey, doc.Version = c.Pub, "1.1.0"
	if err := os.WriteFile(c.Registry, gen.EncodeRegistry(&doc), 0o644); err != nil {
		t.Fatal(err)
	}
	edited, err := registry.LoadFile(c.Registry)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := curation.NewFile(fileOf(c)).Sign(edited); err != nil {
		t.Fatal(err)
	}
	next, err := n.Reload("root", false)
	if err != nil {
		t.Fatal(err)
	}
	if next.Registry.Version() != "1.1.0" || !next.Signature.Verified || s.published != 1 || s.cur.Registry != next.Registry {
		t.Fatalf("reloaded %s (verified %v), published %d", next.Registry.Version(), next.Signature.Verified, s.published)
	}
}

// A file whose signature expired is refused with the remedy left to the
// adapter (FixSignOrAllowExpired), which words it with its own flags; the
// text from curation names none.
func TestReloadRefusesAnExpiredSignatureNamingTheFix(t *testing.T) {
	n, s, c := server(t)
	doc := curator.Doc()
	doc.Curator.Pubkey, doc.Version = c.Pub, "1.1.0"
	if err := os.WriteFile(c.Registry, gen.EncodeRegistry(&doc), 0o644); err != nil {
		t.Fatal(err)
	}
	edited, err := registry.LoadFile(c.Registry)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := curation.NewFile(fileOf(c)).Sign(edited); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(5 * 365 * 24 * time.Hour)
	n.Editor().Now = func() time.Time { return later }
	_, err = n.Reload("root", false)
	var re *curation.ReloadError
	if !errors.As(err, &re) || re.Fix != curation.FixSignOrAllowExpired || re.Path != c.Registry {
		t.Fatalf("got %#v, want a *curation.ReloadError with FixSignOrAllowExpired for %s", err, c.Registry)
	}
	if strings.Contains(re.Text, "--") {
		t.Errorf("curation's text names a flag, which is the adapter's to word: %q", re.Text)
	}
	if s.published != 0 {
		t.Error("a refused reload was published")
	}
}

func TestReloadRefusesARollback(t *testing.T) {
	n, s, c := server(t)
	if _, err := n.UpsertCategory("ada", "new-topic", category("New topic", "new.example")); err != nil {
		t.Fatal(err)
	}
	published := s.published
	old := curator.Doc()
	old.Curator.Pubkey = c.Pub
	if err := os.WriteFile(c.Registry, gen.EncodeRegistry(&old), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := n.Reload("root", false)
	var re *curation.ReloadError
	if !errors.As(err, &re) || re.Version != "1.0.1" || len(re.Problems) == 0 {
		t.Fatalf("got %v, want a *curation.ReloadError keeping 1.0.1", err)
	}
	if re.Fix != curation.FixNone {
		t.Errorf("a rollback's remedy is in its text, yet Fix is %d", re.Fix)
	}
	if s.published != published {
		t.Error("a refused reload was published")
	}
}

func TestRenewSignsOnlyWhenHalfTheValidityIsGone(t *testing.T) {
	n, s, c := server(t)
	if signed, err := n.Renew(); err != nil || signed {
		t.Fatalf("a year-long signature renewed: %v, %v", signed, err)
	}
	at := time.Now().Add(355 * 24 * time.Hour) // ten days left of a year
	n.Editor().Now = func() time.Time { return at }
	signed, err := n.Renew()
	if err != nil || !signed {
		t.Fatalf("renew = %v, %v", signed, err)
	}
	if s.published != 1 || !s.cur.Signature.Expires.After(at) {
		t.Errorf("published %d, the served signature expires %s", s.published, s.cur.Signature.Expires)
	}
	verified(t, c)
}

func TestCheckProposalNamesTheProposalsOwnFields(t *testing.T) {
	doc := curator.Doc()
	doc.Curator.Pubkey = curator.New(t, "").Pub
	reg, err := registry.Load(gen.EncodeRegistry(&doc))
	if err != nil {
		t.Fatal(err)
	}
	two := 2
	dup := gen.Source{Rank: 2, Name: "Again", URL: "https://one.example/", Type: gen.SourceTypeDocumentation, Why: "A test source that explains the topic well enough for this test to use it."}
	err = curation.CheckProposal(reg, &proposals.Proposal{ProposalRecord: gen.ProposalRecord{Action: gen.ProposalActionReplaceSource, Slug: "testing-things", Rank: &two, Source: &dup}}, registry.MaxSize)
	var errs strictjson.Errors
	if !errors.As(err, &errs) || errs[0].Path != "source.url" {
		t.Fatalf("a duplicate source: %v, want it at source.url", err)
	}
	private := category("Private", "example")
	private.Sources[0].URL = "http://10.0.0.1/"
	err = curation.CheckProposal(reg, &proposals.Proposal{ProposalRecord: gen.ProposalRecord{Action: gen.ProposalActionAddCategory, Slug: "private", Category: &private}}, registry.MaxSize)
	if !errors.As(err, &errs) || errs[0].Path != "category.sources[0].url" || !strings.Contains(errs[0].Reason, "a proposal may not name such a host") {
		t.Fatalf("a private host: %v", err)
	}
	fine := category("Fine", "fine.example")
	if err := curation.CheckProposal(reg, &proposals.Proposal{ProposalRecord: gen.ProposalRecord{Action: gen.ProposalActionAddCategory, Slug: "fine", Category: &fine}}, registry.MaxSize); err != nil {
		t.Fatalf("a fine category: %v", err)
	}
	if err := curation.CheckProposal(reg, &proposals.Proposal{ProposalRecord: gen.ProposalRecord{Action: gen.ProposalActionAddCategory, Slug: "fine", Category: &fine}}, int64(reg.Size())); err == nil {
		t.Fatal("a category past the size limit passed")
	}
}

func TestInitWritesARegistryItsLogRecords(t *testing.T) {
	c := curator.New(t, "")
	doc := curator.Doc()
	doc.Curator.Pubkey = c.Pub
	head, err := curation.Init(c.Registry, c.Log, gen.EncodeRegistry(&doc), c.Key, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, h := verified(t, c); h != head || head.Seq != 1 {
		t.Fatalf("init's head %+v, the signature names %+v", head, h)
	}
	if e := lastEntry(t, c); e.Action != gen.AuditActionStart {
		t.Errorf("the first entry is a %s", e.Action)
	}
}

// text is the optional string s, empty when absent.
func text(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Each decision a node holding the curator key makes is signed with it,
// on a server's node and a command's alike: a rejection and an accepted
// change both verify with the registry's curator key.
func TestDecisionsAreSignedWithTheCuratorKey(t *testing.T) {
	srv, _, sc := server(t)
	cmd, cc := command(t)
	for _, x := range []struct {
		name string
		n    *curation.Node
		c    *curator.Node
	}{{"server", srv, sc}, {"command", cmd, cc}} {
		props := withProposals(t, x.n, x.c.Registry)
		a, b := propose(t, props, "topic-a"), propose(t, props, "topic-b")
		if _, err := x.n.Accept("alice", a, "good"); err != nil {
			t.Fatalf("%s: accept: %v", x.name, err)
		}
		if _, err := x.n.Reject("alice", proposals.Selection{IDs: []string{b}}, "out of scope"); err != nil {
			t.Fatalf("%s: reject: %v", x.name, err)
		}
		for _, id := range []string{a, b} {
			p, _ := props.Get(id)
			if err := proposals.VerifyDecision(x.c.Pub, p); err != nil {
				t.Errorf("%s: %s (%s): %v", x.name, id, p.Status, err)
			}
		}
	}
}

// A command given another curator's key rejects nothing: the decision
// it would sign could not be checked with the registry's key.
func TestRejectRefusesAnotherCuratorsKey(t *testing.T) {
	_, c := command(t)
	f := fileOf(c)
	f.Key = curator.New(t, "other").Key
	n := curation.NewFile(f)
	props := withProposals(t, n, c.Registry)
	id := propose(t, props, "topic-a")
	_, err := n.Reject("alice", proposals.Selection{IDs: []string{id}}, "no")
	var we *curation.WrongKeyError
	if !errors.As(err, &we) || we.Curator != c.Pub {
		t.Fatalf("got %v, want *curation.WrongKeyError naming %s", err, c.Pub)
	}
	if p, _ := props.Get(id); p.Status != gen.ProposalStatusPending {
		t.Fatalf("the proposal is %s, want pending", p.Status)
	}
}
