package stdio

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/three-good-sources/3gs/internal/jsonrpc"
	"github.com/three-good-sources/3gs/internal/mcp"
)

// The soak test's length. Every `go test` runs a short form; the full run
// the issue asks for is
//
//	go test ./internal/stdio -run TestSoak -soak.requests=1000000 -v
var soakRequests = flag.Int("soak.requests", 20000, "requests TestSoak sends through one stdio session")

// soakMaxBytes is the line limit during the soak, low so oversized lines
// stay cheap to send.
const soakMaxBytes = 4096

// soakTemplate is one kind of message the soak sends. line holds ID where
// the id goes (absent for notifications and unreadable lines).
type soakTemplate struct {
	name   string
	line   string
	answer string // the answer with id 0, or "" when none is due
	null   bool   // answered with a null id (unreadable, oversized)
	cancel bool   // followed by its cancellation, so never answered
}

const soakID = "\x00ID\x00"

// TestSoak drives one stdio session with a long mix of requests: valid
// calls of every public tool, invalid arguments and envelopes, unreadable
// and oversized lines, notifications, client responses, and requests
// cancelled while they run. Every answer must equal the one the same
// request gets alone, under its own id, and exactly the due answers must
// come. After a warm-up, the live heap and the goroutine count must stay
// flat; resident memory is reported.
func TestSoak(t *testing.T) {
	n := *soakRequests
	if testing.Short() {
		n = min(n, 5000)
	}
	h := &blockingHandlers{Handlers: baseHandlers(t), block: make(chan struct{})}
	srv := mcp.NewServer(mcp.Config{Handlers: h, Version: "test", Log: slog.New(slog.DiscardHandler)})
	templates := soakTemplates(t, srv)

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- Serve(context.Background(), srv.NewSession(), inR, outW, Options{MaxMessageBytes: soakMaxBytes})
		outW.Close()
	}()

	// The sender records what each id must be answered with before the
	// line goes out; the receiver checks answers against it.
	var mu sync.Mutex
	due := map[string]*soakTemplate{}
	nullsDue := 0
	go func() {
		w := bufio.NewWriter(inW)
		w.WriteString(initLine + "\n")
		for i := 1; i <= n; i++ {
			tp := &templates[i%len(templates)]
			id := strconv.Itoa(i)
			if i%7 == 0 {
				id = `"r-` + id + `"`
			}
			mu.Lock()
			switch {
			case tp.null:
				nullsDue++
			case tp.answer != "":
				due[id] = tp
			}
			mu.Unlock()
			w.WriteString(strings.ReplaceAll(tp.line, soakID, id))
			w.WriteByte('\n')
			if tp.cancel {
				fmt.Fprintf(w, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s}}`+"\n", id)
			}
		}
		w.Flush()
		inW.Close()
	}()

	var (
		answered, nulls int
		warm            *soakSample
		peak            soakSample
	)
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	sc.Scan() // the initialize answer
	for sc.Scan() {
		line := sc.Bytes()
		id, rest, ok := splitAnswer(line)
		if !ok {
			t.Fatalf("not an answer: %q", line)
		}
		if id == "null" {
			nulls++
			continue
		}
		mu.Lock()
		tp := due[id]
		delete(due, id)
		mu.Unlock()
		if tp == nil {
			t.Fatalf("an answer nobody was owed, or a second one: %q", line)
		}
		if _, want, _ := splitAnswer([]byte(tp.answer)); !bytes.Equal(rest, want) {
			t.Fatalf("%s %s answered\n%s\nwant\n%s", tp.name, id, rest, want)
		}
		answered++
		if answered%(max(n/20, 1)) == 0 {
			s := sample()
			if warm == nil && answered >= n/5 {
				warm = &s
			}
			if warm != nil {
				peak = peak.max(s)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if len(due) != 0 {
		t.Fatalf("%d requests were never answered", len(due))
	}
	if nulls != nullsDue {
		t.Fatalf("%d answers with a null id, want %d", nulls, nullsDue)
	}
	end := sample()
	t.Logf("%d messages, %d answers checked, %d null-id refusals", n, answered, nulls)
	if warm == nil {
		t.Skipf("too few requests (%d) to judge memory", n)
	}
	t.Logf("after warm-up: heap %s, RSS %s, %d goroutines; peak heap %s, RSS %s, %d goroutines; at the end heap %s, RSS %s, %d goroutines",
		mib(warm.heap), mib(warm.rss), warm.goroutines, mib(peak.heap), mib(peak.rss), peak.goroutines, mib(end.heap), mib(end.rss), end.goroutines)
	// The server is gone at the end, so the end must not exceed the warm
	// state: a leak would hold what it leaked. During the run, the peak
	// live heap must stay near the warm one (64 workers' answers, the
	// queues and the pools are all bounded).
	if peak.goroutines > warm.goroutines {
		t.Errorf("goroutines: %d after warm-up, up to %d later", warm.goroutines, peak.goroutines)
	}
	if end.goroutines > warm.goroutines {
		t.Errorf("goroutines: %d after warm-up, %d at the end", warm.goroutines, end.goroutines)
	}
	if end.heap > warm.heap+4<<20 {
		t.Errorf("live heap grew from %s after warm-up to %s at the end", mib(warm.heap), mib(end.heap))
	}
	if peak.heap > warm.heap+16<<20 {
		t.Errorf("live heap peaked at %s, %s after warm-up", mib(peak.heap), mib(warm.heap))
	}
}

// soakTemplates builds the mix, and each template's answer as the same
// request gets it on a session of its own.
func soakTemplates(t *testing.T, srv *mcp.Server) []soakTemplate {
	call := func(tool, args string) string {
		return `{"jsonrpc":"2.0","id":` + soakID + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
	}
	ts := []soakTemplate{
		{name: "get_sources (match)", line: call("get_sources", `{"query":"learn rust ownership"}`)},
		{name: "get_sources (typo)", line: call("get_sources", `{"query":"kubernets pods"}`)},
		{name: "get_sources (no match)", line: call("get_sources", `{"query":"quantum chromodynamics"}`)},
		{name: "get_sources (threshold)", line: call("get_sources", `{"query":"postfix dkim","threshold":0.9}`)},
		{name: "list_categories", line: call("list_categories", `{}`)},
		{name: "get_provenance", line: call("get_provenance", `{}`)},
		{name: "get_endorsements", line: call("get_endorsements", `{}`)},
		{name: "tools/list", line: `{"jsonrpc":"2.0","id":` + soakID + `,"method":"tools/list"}`},
		{name: "ping", line: `{"jsonrpc":"2.0","id":` + soakID + `,"method":"ping"}`},
		{name: "unknown argument", line: call("get_sources", `{"query":"rust","Query":"x"}`)},
		{name: "query too long", line: call("get_sources", `{"query":"`+strings.Repeat("a", 501)+`"}`)},
		{name: "admin tool without a token", line: call("upsert_category", `{}`)},
		{name: "repeated member", line: `{"jsonrpc":"2.0","id":` + soakID + `,"method":"ping","method":"tools/list"}`},
		{name: "unknown method", line: `{"jsonrpc":"2.0","id":` + soakID + `,"method":"resources/list"}`},
		{name: "cancelled while running", line: call("get_sources", `{"query":"block"}`), cancel: true},
		{name: "notification", line: `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{name: "client response", line: `{"jsonrpc":"2.0","id":` + soakID + `,"result":{}}`},
		{name: "unreadable", line: `{"jsonrpc":"2.0","id":` + soakID + `,"method":`, null: true},
		{name: "invalid UTF-8", line: "{\"jsonrpc\":\"2.0\",\"id\":" + soakID + ",\"method\":\"\xff\"}", null: true},
		{name: "oversized", line: `{"jsonrpc":"2.0","id":` + soakID + `,"method":"ping","params":{"pad":"` + strings.Repeat("x", soakMaxBytes) + `"}}`, null: true},
	}
	sess := srv.NewSession()
	initialize := []byte(initLine)
	if m, _, perr := jsonrpc.Parse(initialize); perr != nil || sess.Handle(context.Background(), m, nil) == nil {
		t.Fatal("initialize failed")
	}
	for i := range ts {
		tp := &ts[i]
		if tp.null || tp.cancel {
			continue
		}
		m, id, perr := jsonrpc.Parse([]byte(strings.ReplaceAll(tp.line, soakID, "0")))
		switch {
		case perr != nil:
			tp.answer = string(jsonrpc.AppendError(nil, id, perr))
		case m.Kind == jsonrpc.KindRequest:
			tp.answer = string(sess.Handle(context.Background(), m, nil))
		}
	}
	return ts
}

// splitAnswer cuts an answer line after its id: `{"jsonrpc":"2.0","id":` ID
// `,` REST.
func splitAnswer(line []byte) (id string, rest []byte, ok bool) {
	const head = `{"jsonrpc":"2.0","id":`
	if !bytes.HasPrefix(line, []byte(head)) {
		return "", nil, false
	}
	line = line[len(head):]
	end := 0
	if len(line) > 0 && line[0] == '"' {
		end = bytes.IndexByte(line[1:], '"') + 2
	} else {
		end = bytes.IndexByte(line, ',')
	}
	if end <= 0 || end > len(line) {
		return "", nil, false
	}
	return string(line[:end]), line[end:], true
}

type soakSample struct {
	heap, rss  uint64
	goroutines int
}

func (a soakSample) max(b soakSample) soakSample {
	return soakSample{max(a.heap, b.heap), max(a.rss, b.rss), max(a.goroutines, b.goroutines)}
}

// sample measures the live heap after a collection, the resident set and
// the goroutines.
func sample() soakSample {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return soakSample{heap: ms.HeapAlloc, rss: rss(), goroutines: runtime.NumGoroutine()}
}

// rss reads the resident set size from /proc; 0 where there is none.
func rss() uint64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
