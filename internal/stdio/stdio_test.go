package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/three-good-sources/3gs/internal/testserver"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/testkit"
	"github.com/three-good-sources/3gs/internal/tools"
)

func session(t testing.TB, h gen.ToolHandlers) *mcp.Session {
	t.Helper()
	if h == nil {
		h, _ = testserver.Handlers(t, testserver.Options{})
	}
	return mcp.NewServer(mcp.Config{Handlers: h, Version: "test", Log: slog.New(slog.DiscardHandler)}).NewSession()
}

const initLine = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// serve runs Serve over in and returns the response lines.
func serve(t *testing.T, h gen.ToolHandlers, in string, opt Options) []string {
	t.Helper()
	var out strings.Builder
	if err := Serve(context.Background(), session(t, h), strings.NewReader(in), &out, opt); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

type response struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decode(t *testing.T, line string) response {
	t.Helper()
	var r response
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("not a JSON response: %q", line)
	}
	return r
}

// Hundreds of pipelined requests, some cancelled, run concurrently under
// the race detector: every request that was not cancelled is answered
// exactly once, and nothing is answered twice.
func TestPipelinedConcurrentWithCancellations(t *testing.T) {
	const n = 600
	block := make(chan struct{})
	h := &blockingHandlers{Handlers: baseHandlers(t), block: block}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), session(t, h), inR, outW, Options{MaxInFlight: 1000})
		outW.Close()
	}()

	answers := map[string]int{}
	var mu sync.Mutex
	readDone := make(chan struct{})
	sentinel := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			r := decode(t, sc.Text())
			mu.Lock()
			answers[string(r.ID)]++
			mu.Unlock()
			if string(r.ID) == `"sentinel"` {
				close(sentinel)
			}
		}
		close(readDone)
	}()

	w := bufio.NewWriter(inW)
	fmt.Fprintln(w, initLine)
	for i := range n {
		// Every fifth request blocks until released, so its cancellation
		// surely arrives while it runs.
		q := "learn rust"
		if i%5 == 0 {
			q = "block"
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":%q}}}`+"\n", i, q)
		if i%7 == 0 {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":"list-%d","method":"tools/list"}`+"\n", i)
		}
	}
	for i := 0; i < n; i += 5 {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"test"}}`+"\n", i)
	}
	// The reader handles lines in order, so once this ping is answered every
	// cancellation above has been applied.
	fmt.Fprintln(w, `{"jsonrpc":"2.0","id":"sentinel","method":"ping"}`)
	// Duplicate ids in flight are both answered.
	fmt.Fprintln(w, `{"jsonrpc":"2.0","id":"dup","method":"ping"}`)
	fmt.Fprintln(w, `{"jsonrpc":"2.0","id":"dup","method":"ping"}`)
	w.Flush()
	h.waitBlocked(n / 5)
	<-sentinel
	close(block)
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	<-readDone

	if answers[`"init"`] != 1 || answers[`"dup"`] != 2 {
		t.Errorf("init answered %d times, dup %d times", answers[`"init"`], answers[`"dup"`])
	}
	for i := range n {
		got := answers[fmt.Sprint(i)]
		want := 1
		if i%5 == 0 {
			want = 0
		}
		if got != want {
			t.Errorf("request %d answered %d times, want %d", i, got, want)
		}
		if i%7 == 0 && answers[fmt.Sprintf(`"list-%d"`, i)] != 1 {
			t.Errorf("tools/list %d not answered once", i)
		}
	}
}

func baseHandlers(t *testing.T) *tools.Handlers {
	h, _ := testserver.Handlers(t, testserver.Options{})
	return h
}

// blockingHandlers makes get_sources for "block" wait until released or
// cancelled, and panics for "panic".
type blockingHandlers struct {
	*tools.Handlers
	block   chan struct{}
	mu      sync.Mutex
	cond    *sync.Cond
	blocked int
}

func (b *blockingHandlers) GetSources(ctx context.Context, in *gen.GetSourcesInput) (*gen.GetSourcesOutput, error) {
	q := ""
	if in.Query != nil {
		q = *in.Query
	}
	switch q {
	case "block":
		b.mu.Lock()
		b.blocked++
		if b.cond != nil {
			b.cond.Broadcast()
		}
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-b.block:
		}
	case "panic":
		panic("handler bug")
	}
	return b.Handlers.GetSources(ctx, in)
}

func (b *blockingHandlers) waitBlocked(n int) {
	b.mu.Lock()
	if b.cond == nil {
		b.cond = sync.NewCond(&b.mu)
	}
	for b.blocked < n {
		b.cond.Wait()
	}
	b.mu.Unlock()
}

func TestOversizedLineIsRefusedAndServingGoesOn(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":"` + strings.Repeat("x", 3000) + `"}}}`
	lines := serve(t, nil, initLine+"\n"+big+"\n"+`{"jsonrpc":"2.0","id":3,"method":"ping"}`+"\n", Options{MaxMessageBytes: 2048})
	if len(lines) != 3 {
		t.Fatalf("got %d lines: %q", len(lines), lines)
	}
	if r := decode(t, lines[1]); r.Error == nil || r.Error.Code != -32600 || string(r.ID) != "null" || !strings.Contains(r.Error.Message, "longer than 2048 bytes") {
		t.Errorf("oversized line: %s", lines[1])
	}
	if r := decode(t, lines[2]); string(r.ID) != "3" || r.Error != nil {
		t.Errorf("after the oversized line: %s", lines[2])
	}
	// Exactly at the limit is accepted.
	exact := `{"jsonrpc":"2.0","id":4,"method":"ping","params":{"pad":"` + strings.Repeat("y", 2048-len(`{"jsonrpc":"2.0","id":4,"method":"ping","params":{"pad":""}}`)) + `"}}`
	lines = serve(t, nil, initLine+"\n"+exact+"\n", Options{MaxMessageBytes: 2048})
	if len(exact) != 2048 || len(lines) != 2 || decode(t, lines[1]).Error != nil {
		t.Errorf("a %d-byte line at a 2048-byte limit: %q", len(exact), lines)
	}
}

// A request already read when stdin reaches EOF is still answered, and a
// final line without a newline counts.
func TestEOFDrainsRequestsInFlight(t *testing.T) {
	lines := serve(t, nil, initLine+"\n"+`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"list_categories"}}`, Options{})
	if len(lines) != 2 || string(decode(t, lines[1]).ID) != "5" {
		t.Errorf("got %q", lines)
	}
}

func TestPanicBecomesInternalError(t *testing.T) {
	h := &blockingHandlers{Handlers: baseHandlers(t)}
	lines := serve(t, h, initLine+"\n"+`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":"panic"}}}`+"\n"+`{"jsonrpc":"2.0","id":7,"method":"ping"}`+"\n", Options{})
	got := map[string]response{}
	for _, l := range lines[1:] {
		r := decode(t, l)
		got[string(r.ID)] = r
	}
	if r := got["6"]; r.Error == nil || r.Error.Code != -32603 || r.Error.Message != "Internal error" {
		t.Errorf("panic answered %+v", r)
	}
	if r := got["7"]; r.Error != nil || r.Result == nil {
		t.Errorf("the server stopped serving after a panic: %+v", r)
	}
}

// However many requests arrive, at most MaxInFlight handlers run at once:
// the reader waits for a free slot before starting the next request.
func TestInFlightIsBounded(t *testing.T) {
	const slots, n = 2, 8
	h := &countingHandlers{Handlers: baseHandlers(t), release: make(chan struct{})}
	h.cond = sync.NewCond(&h.mu)
	var in strings.Builder
	in.WriteString(initLine + "\n")
	for i := range n {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":"rust"}}}`+"\n", i)
	}
	var out testkit.SyncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), session(t, h), strings.NewReader(in.String()), &out, Options{MaxInFlight: slots})
	}()
	for i := range n {
		h.mu.Lock()
		for h.started < min(i+slots, n) {
			h.cond.Wait()
		}
		// Give an unbounded reader every chance to start more handlers
		// before the check; a bounded one has nothing to start.
		h.mu.Unlock()
		for range 200 {
			runtime.Gosched()
		}
		h.mu.Lock()
		if h.running > slots {
			t.Errorf("%d handlers running with %d slots", h.running, slots)
		}
		h.mu.Unlock()
		h.release <- struct{}{}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if h.maxRunning > slots || h.started != n {
		t.Errorf("started %d, at most %d at once; want %d, at most %d", h.started, h.maxRunning, n, slots)
	}
}

// countingHandlers counts get_sources calls running at once; each waits
// for one token on release.
type countingHandlers struct {
	*tools.Handlers
	release                      chan struct{}
	mu                           sync.Mutex
	cond                         *sync.Cond
	started, running, maxRunning int
}

func (c *countingHandlers) GetSources(ctx context.Context, in *gen.GetSourcesInput) (*gen.GetSourcesOutput, error) {
	c.mu.Lock()
	c.started++
	c.running++
	c.maxRunning = max(c.maxRunning, c.running)
	c.cond.Broadcast()
	c.mu.Unlock()
	<-c.release
	c.mu.Lock()
	c.running--
	c.mu.Unlock()
	return c.Handlers.GetSources(ctx, in)
}

// Keys are matched exactly: a cancellation naming "RequestId" cancels
// nothing, so the request is still answered.
func TestCancellationKeyIsCaseSensitive(t *testing.T) {
	block := make(chan struct{})
	h := &blockingHandlers{Handlers: baseHandlers(t), block: block}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), session(t, h), inR, outW, Options{}); outW.Close() }()
	answers := make(chan response, 8)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			answers <- decode(t, sc.Text())
		}
		close(answers)
	}()
	fmt.Fprintln(inW, initLine)
	<-answers
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":"block"}}}`)
	h.waitBlocked(1)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"RequestId":1}}`)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":"sentinel","method":"ping"}`)
	if r := <-answers; string(r.ID) != `"sentinel"` {
		t.Fatalf("expected the sentinel first, got %s", r.ID)
	}
	close(block)
	inW.Close() // Serve drains and returns; the answers channel then closes
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var got []string
	for r := range answers {
		got = append(got, string(r.ID))
	}
	if len(got) != 1 || got[0] != "1" {
		t.Errorf("after a case-variant cancellation, request 1 must still be answered; got answers %v", got)
	}
}

// pingSource yields an initialize and then pings, one line per Read so the
// reader's buffer holds no lines ahead, and counts the lines handed out.
// Past bound lines it reports an overrun; once stopped it ends the input.
type pingSource struct {
	mu       sync.Mutex
	produced int
	bound    int
	stopped  bool
	overrun  chan struct{}
	pending  []byte
}

func (p *pingSource) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.pending) == 0 {
		if p.stopped {
			return 0, io.EOF
		}
		if p.produced == p.bound {
			close(p.overrun)
			p.stopped = true
			return 0, io.EOF
		}
		if p.produced == 0 {
			p.pending = []byte(initLine + "\n")
		} else {
			p.pending = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", p.produced)
		}
		p.produced++
	}
	n := copy(b, p.pending)
	p.pending = p.pending[n:]
	return n, nil
}

// heldWriter blocks every Write until released: a client that does not
// read its answers.
type heldWriter struct {
	release chan struct{}
	mu      sync.Mutex
	buf     strings.Builder
}

func (h *heldWriter) Write(b []byte) (int, error) {
	<-h.release
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.buf.Write(b)
}

// A client that sends without reading answers: once the answer queue and
// every worker are full, the server reads nothing more, so what it holds
// is bounded by its limits however long the client keeps sending. When the
// client reads again, every request read is answered.
func TestUnreadAnswersStopTheReader(t *testing.T) {
	const inFlight = 4
	queue := 2 * inFlight
	// What can be read before everything stops: the answers the writer's
	// 64 KiB output buffer took before its write blocked (the shortest
	// answer, to a ping with a one-digit id, is 37 bytes with its newline),
	// the queue, one answer held by each worker, and one more line the
	// reader holds while it waits for a worker.
	bound := (64<<10)/37 + queue + inFlight + 1
	src := &pingSource{bound: bound + 1, overrun: make(chan struct{})}
	out := &heldWriter{release: make(chan struct{})}
	stalled := make(chan struct{})
	var once sync.Once
	testHookSendBlocked = func(waiting int) {
		if waiting == inFlight {
			once.Do(func() { close(stalled) })
		}
	}
	defer func() { testHookSendBlocked = nil }()
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), session(t, nil), src, out, Options{MaxInFlight: inFlight}) }()
	select {
	case <-stalled:
	case <-src.overrun:
		t.Fatalf("the server read more than %d lines from a client that reads no answers", bound)
	}
	src.mu.Lock()
	read := src.produced
	src.stopped = true
	src.mu.Unlock()
	if read > bound {
		t.Fatalf("read %d lines, bound %d", read, bound)
	}
	close(out.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	src.mu.Lock()
	read = src.produced
	src.mu.Unlock()
	if lines := strings.Count(out.buf.String(), "\n"); lines != read {
		t.Errorf("%d lines read, %d answered", read, lines)
	}
	t.Logf("stopped after reading %d lines (bound %d)", read, bound)
}

// panicking implements every tool by panicking: its embedded interface is
// nil, so any method called on it dereferences nil.
type panicking struct{ gen.ToolHandlers }

// TestEveryToolPanicIsContained: whichever tool panics, its caller gets
// -32603 "Internal error" with nothing of the panic in it, the full stack
// goes to the log (stderr), and the next request is served.
func TestEveryToolPanicIsContained(t *testing.T) {
	secrets, keyring := testserver.Keyring(t, testserver.Token{Name: "root", Tier: gen.TierAdmin})
	admin := secrets[0]
	for _, tool := range gen.Tools {
		args := tool.Examples.Arguments[0] // valid, so the handler is reached
		var logs testkit.SyncBuffer
		srv := mcp.NewServer(mcp.Config{Handlers: panicking{}, Version: "test", Log: slog.New(slog.DiscardHandler), Keyring: keyring})
		in := initLine + "\n" + `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool.Name + `","arguments":` + args + `}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"
		var out strings.Builder
		if err := Serve(context.Background(), srv.NewSessionWithToken(admin), strings.NewReader(in), &out, Options{Log: slog.New(slog.NewTextHandler(&logs, nil))}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		got := map[string]string{}
		for _, l := range lines[1:] {
			got[string(decode(t, l).ID)] = l
		}
		if want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}`; got["1"] != want {
			t.Errorf("%s: answered %s, want %s", tool.Name, got["1"], want)
		}
		if got["2"] != `{"jsonrpc":"2.0","id":2,"result":{}}` {
			t.Errorf("%s: the next request got %q", tool.Name, got["2"])
		}
		if log := logs.String(); !strings.Contains(log, "request panicked") || !strings.Contains(log, "nil pointer dereference") || !strings.Contains(log, "goroutine ") {
			t.Errorf("%s: the log lacks the panic and its stack:\n%s", tool.Name, log)
		}
	}
}

// Large answers to a client that does not read them stop the senders once
// MaxQueuedBytes wait, long before the count bound: memory is bounded in
// bytes, not only in messages.
func TestQueuedBytesBounded(t *testing.T) {
	out := &heldWriter{release: make(chan struct{})}
	w := newWriter(out, 1000)
	go w.loop()
	blocked := make(chan struct{})
	var once sync.Once
	testHookSendBlocked = func(int) { once.Do(func() { close(blocked) }) }
	defer func() { testHookSendBlocked = nil }()
	const size, total = 1 << 20, 20
	var sent atomic.Int64
	allSent := make(chan struct{})
	go func() {
		for range total {
			w.send(bytes.Repeat([]byte("a"), size))
			sent.Add(1)
		}
		close(allSent)
	}()
	select {
	case <-blocked:
	case <-allSent:
		t.Fatalf("all %d answers of 1 MiB were queued to a client that reads nothing", total)
	}
	if n := sent.Load(); n*size > MaxQueuedBytes {
		t.Errorf("%d MiB queued before senders waited; bound %d MiB", n, MaxQueuedBytes>>20)
	}
	close(out.release)
	<-allSent
	w.close()
	if got := strings.Count(out.buf.String(), "\n"); got != total {
		t.Errorf("%d answers written once the client read, want %d", got, total)
	}
}

// get_sources needs exactly one of query or slug. Every way of giving
// neither, and giving both, is refused by its decoder with -32602 whose
// message says which and how to choose; the handler never runs. A blank
// query names one, so it reaches the handler and is a result with isError.
func TestGetSourcesNeedsQueryOrSlug(t *testing.T) {
	const neither = "Invalid params: arguments: needs exactly one of query or slug, got neither: query searches by topic; slug names a category from an earlier answer or list_categories"
	const both = "Invalid params: arguments: needs exactly one of query or slug, got both: query searches by topic; slug names a category from an earlier answer or list_categories"
	cases := []struct{ name, params, want string }{
		{"empty arguments", `"name":"get_sources","arguments":{}`, neither},
		{"arguments null", `"name":"get_sources","arguments":null`, neither},
		{"arguments left out", `"name":"get_sources"`, neither},
		{"threshold alone", `"name":"get_sources","arguments":{"threshold":0.5}`, neither},
		{"both", `"name":"get_sources","arguments":{"query":"learn rust","slug":"rust-learning"}`, both},
		{"blank query", `"name":"get_sources","arguments":{"query":"   "}`, ""},
	}
	in := initLine + "\n"
	for i, c := range cases {
		in += `{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/call","params":{` + c.params + `}}` + "\n"
	}
	got := map[string]response{}
	for _, l := range serve(t, nil, in, Options{})[1:] {
		r := decode(t, l)
		got[string(r.ID)] = r
	}
	for i, c := range cases {
		r := got[strconv.Itoa(i)]
		switch {
		case c.want != "" && (r.Error == nil || r.Error.Code != -32602 || r.Error.Message != c.want):
			t.Errorf("%s: got %+v %s, want -32602 %q", c.name, r.Error, r.Result, c.want)
		case c.want == "" && (r.Error != nil || !strings.Contains(string(r.Result), `"isError":true`) || !strings.Contains(string(r.Result), "Query cannot be empty")):
			t.Errorf("%s: got %+v %s, want a result with isError", c.name, r.Error, r.Result)
		}
	}
}
