package peer

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auditlog"
	"github.com/three-good-sources/3gs/internal/fetch"
)

// A curator's audit log is a hash chain of every change to the registry,
// each entry signed by the curator key, and the registry's signature names
// the log's head: the seq and hash of the entry that produced it. A
// version number alone cannot show that a curator (or whoever holds the
// key) tells everyone the same history: two readers could be shown two
// registries, each with a higher version than the last. Once a reader
// holds a head, though, every later registry must come with a log that
// extends that head, entry by entry, so two diverging histories cannot
// both be accepted by one reader, and a reader that compares heads with
// another sees the fork.

// auditPage is the most entries a node's /audit answers at once; asking
// for all of them costs the fewest requests.
const auditPage = 1000

// errReached stops reading a log at the head a signature covers: what a
// peer's log holds past it is not this copy's concern.
var errReached = errors.New("reached the signed head")

// checkLog checks c's log head against the one last's signature covered.
// With none held there is nothing to check: c's head, if any, is
// remembered from now on. Otherwise c must cover the same head with the
// same registry, or a later head whose log tail, read with tail, links
// entry by entry to the held head, each entry signed by key, the last
// being c's head and recording c's registry.
func checkLog(key ed25519.PublicKey, last, c *Copy, tail func(after, until int) (io.ReadCloser, error)) error {
	held, got := last.Log, c.Log
	sha, lastSHA := c.Registry.SHA256(), last.Registry.SHA256()
	switch {
	case held == nil:
		return nil
	case got == nil:
		// Accepting it would drop the head, and with it any check that a
		// later copy's log extends the one held: a fork would only need
		// one copy signed without its head to pass.
		return refuse("audit log: the accepted copy's signature covers its curator's audit log up to seq %d, and this copy's covers no log head, so nothing shows it follows that log; its curator signs it with the log (3gs sign)", held.Seq)
	case got.Seq < held.Seq:
		return refuse("audit log rolled back: this copy's signature covers the log up to seq %d, but the accepted copy's already covered seq %d", got.Seq, held.Seq)
	case got.Seq == held.Seq && got.Hash != held.Hash:
		return refuse("audit log forked at seq %d: this copy's signature names an entry hashing to %.16s…, the accepted copy's one hashing to %.16s…; two logs under one curator key mean different readers are shown different histories", got.Seq, got.Hash, held.Hash)
	case got.Seq == held.Seq && sha != lastSHA:
		return refuse("audit log seq %d records the accepted registry (SHA-256 %.12s), yet this copy (%.12s) names the same head: a changed registry must come with a new log entry", got.Seq, lastSHA, sha)
	case got.Seq == held.Seq:
		return nil // the same registry, signed again
	case tail == nil:
		return refuse("audit log seq %d: this copy's signature covers a later head than the accepted copy's (seq %d), and there is no way here to read the log between them", got.Seq, held.Seq)
	}
	r, err := tail(held.Seq, got.Seq)
	if err != nil {
		return tailRefusal(held.Seq, got.Seq, err)
	}
	defer r.Close()
	rep, err := auditlog.Verify(r, auditlog.Options{
		Key: key, From: held.Seq, FromHash: held.Hash, FromAfter: lastSHA,
		Each: func(e *gen.AuditEntry, _ []byte) error {
			// A signed entry after unsigned ones is allowed in a log's
			// beginning; past a head a signature covered, every entry is
			// the curator's own or not the curator's log.
			if e.Signature == nil {
				return &auditlog.Problem{Seq: e.Seq, Reason: "unsigned: every entry after a head the curator signed must be signed by the curator key"}
			}
			if e.Seq == got.Seq {
				return errReached
			}
			return nil
		},
	})
	switch {
	case err == nil:
		return refuse("audit log seq %d: the published log ends at seq %d, short of seq %d this copy's signature covers: entries are missing", rep.Head.Seq+1, rep.Head.Seq, got.Seq)
	case !errors.Is(err, errReached):
		return tailRefusal(held.Seq, got.Seq, err)
	case rep.Head.Hash != got.Hash:
		return refuse("audit log seq %d: the published entry hashes to %.16s…, but this copy's signature names %.16s…: the log was rewritten", got.Seq, rep.Head.Hash, got.Hash)
	case rep.Last.After != sha:
		return refuse("audit log seq %d: the entry records the registry %.16s…, but this copy is %.16s…", got.Seq, rep.Last.After, sha)
	}
	return nil
}

// tailRefusal refuses a copy whose log tail from after to until could not
// be read or did not check out. An unreachable log refuses the copy too:
// without it, nothing shows the copy extends the history already held.
func tailRefusal(after, until int, err error) error {
	var p *auditlog.Problem
	if errors.As(err, &p) {
		return refuse("audit log: the published log does not extend the accepted copy's head (seq %d) to this copy's (seq %d): %v", after, until, p)
	}
	var r *Refusal
	if errors.As(err, &r) {
		err = errors.New(r.Reason)
	}
	return refuse("audit log seq %d to %d: %v; without it nothing shows this copy extends the accepted copy's log", after+1, until, err)
}

// logTail opens the audit log published for the registry at rawURL from
// the entry after seq after: a node's /audit in pages, asked for no
// further than until, or a document's whole .audit.jsonl with the lines
// up to after skipped. What it reads is bounded by f.MaxBytes in all and
// by ctx's deadline, through the client that follows redirects only on
// the endorsed host.
func (f *Fetcher) logTail(ctx context.Context, rawURL string, after, until int) (io.ReadCloser, error) {
	u, paged, err := LocateLog(rawURL)
	if err != nil {
		return nil, refuse("%v", err)
	}
	t := &tailReader{ctx: ctx, f: f, base: u, paged: paged, since: after, until: until, left: f.MaxBytes, more: true}
	if paged {
		return t, nil
	}
	// A document's log is the whole file: its first after lines are the
	// entries already held, whose hashes the tail's first entry links to.
	br := bufio.NewReaderSize(t, auditlog.MaxLine+1)
	for n := 0; n < after; n++ {
		if err := skipLine(br); err != nil {
			t.Close()
			if err == io.EOF {
				return nil, refuse("%s holds %d entries, fewer than the seq %d already held: it was cut or rewritten", u, n, after)
			}
			return nil, err
		}
	}
	return struct {
		io.Reader
		io.Closer
	}{br, t}, nil
}

// ReadLog opens the audit log published for the registry at rawURL (a
// node's /audit, or the .audit.jsonl beside a registry document) from its
// first entry up to seq until, within f's bounds and timeout: for
// restoring a log lost where the registry is kept (store.RestoreLog),
// which checks every entry it reads. Close it when done.
func (f *Fetcher) ReadLog(ctx context.Context, rawURL string, until int) (io.ReadCloser, error) {
	return f.ReadLogFrom(ctx, rawURL, 0, until)
}

// ReadLogFrom is ReadLog from the entry after seq after: for a read
// replica's mirror of its origin's log (internal/follow), which checks
// that the first entry links to the last one it holds.
func (f *Fetcher) ReadLogFrom(ctx context.Context, rawURL string, after, until int) (io.ReadCloser, error) {
	ctx, cancel := context.WithTimeout(ctx, f.Timeout)
	r, err := f.logTail(ctx, rawURL, after, until)
	if err != nil {
		cancel()
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{r, closeBoth{r, cancel}}, nil
}

// closeBoth closes a reader and then ends its context.
type closeBoth struct {
	io.Closer
	cancel context.CancelFunc
}

func (c closeBoth) Close() error {
	err := c.Closer.Close()
	c.cancel()
	return err
}

// skipLine reads past the next newline, however long the line.
func skipLine(br *bufio.Reader) error {
	for {
		line, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(line) > 0:
			return io.EOF // a torn last line is no entry
		}
		return err
	}
}

// tailReader reads a published audit log as one stream: for a node, page
// after page while Audit-Next says more remain and the pages have not
// yet reached until; for a document, the one file.
type tailReader struct {
	ctx   context.Context
	f     *Fetcher
	base  string
	paged bool
	since int // a node's next page starts after this seq
	until int
	more  bool // another page (or, first, the file) is to be opened
	left  int64
	url   string // what body reads, for messages
	body  io.ReadCloser
}

func (t *tailReader) Read(p []byte) (int, error) {
	for {
		if t.body == nil {
			if !t.more {
				return 0, io.EOF
			}
			if err := t.open(); err != nil {
				return 0, err
			}
		}
		// One byte past the budget tells a log that is too long from one
		// that ends exactly there.
		if int64(len(p)) > t.left+1 {
			p = p[:t.left+1]
		}
		n, err := t.body.Read(p)
		t.left -= int64(n)
		if t.left < 0 {
			return 0, refuse("%s: more than %d bytes before reaching seq %d", t.url, t.f.MaxBytes, t.until)
		}
		if err == io.EOF {
			t.body.Close()
			t.body = nil
			if n == 0 {
				continue
			}
			err = nil
		}
		if err != nil {
			return n, t.f.failure(err)
		}
		return n, nil
	}
}

// open requests the next page, or the file.
func (t *tailReader) open() error {
	t.url, t.more = t.base, false
	if t.paged {
		t.url = fmt.Sprintf("%s?since=%d&limit=%d", t.base, t.since, auditPage)
	}
	// Read as it comes, line by line, through the one outbound client;
	// t.left bounds all the pages together (Read).
	resp, err := t.f.Client.Open(t.ctx, fetch.Request{URL: t.url, What: "audit log", Accept: "application/jsonl, */*;q=0.1", Limit: t.left + 1, Operator: t.f.Operator})
	if err != nil {
		return t.f.failure(err)
	}
	switch resp.Status {
	case http.StatusOK:
	case http.StatusNotFound:
		return refuse("%s: HTTP 404: the peer publishes no audit log", t.url)
	default:
		return &fetch.Error{Public: fetch.Unreachable, Detail: fmt.Sprintf("audit log %s: HTTP %d", t.url, resp.Status)}
	}
	if h := resp.Header.Get("Audit-Next"); t.paged && h != "" {
		next, err := strconv.Atoi(h)
		if err != nil || next <= t.since {
			resp.Body.Close()
			// A next page that does not move on would be asked for ever.
			return refuse("%s: Audit-Next %q is not a seq past %d", t.url, h, t.since)
		}
		// The pages so far reach next; past until nothing more is needed.
		t.since, t.more = next, next < t.until
	}
	t.body = resp.Body
	return nil
}

// Close closes the page being read.
func (t *tailReader) Close() error {
	if t.body != nil {
		err := t.body.Close()
		t.body = nil
		return err
	}
	return nil
}
