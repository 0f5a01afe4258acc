// Package loadgen drives an MCP Streamable HTTP server with concurrent
// clients over keep-alive connections and reports what they saw:
// throughput, latency percentiles and errors. The HTTP load test
// (internal/e2e) and the comparison benchmark (bench/httpload) share it.
//
// In the 2025-11-25 era each client opens its own session, as deployed
// hosts do; in the 2026-07-28 era there is no session and every request
// carries its protocol version and client capabilities in params._meta,
// mirrored in the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers.
// Either way each client then calls get_sources in a loop, one request at
// a time.
package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Config is one load run.
type Config struct {
	// URL is the server's MCP endpoint.
	URL string
	// Clients run at once, each on its own connection.
	Clients int
	// Warmup runs before measuring; Duration is measured.
	Warmup, Duration time.Duration
	// Queries are asked in turn.
	Queries []string
	// Era is the protocol version spoken: Legacy (the default when empty)
	// or Modern.
	Era string
}

// The protocol eras Config.Era names.
const (
	Legacy = "2025-11-25"
	Modern = "2026-07-28"
)

// Result is what the clients measured.
type Result struct {
	Requests int
	Errors   int
	// FirstError describes the first failed request.
	FirstError string
	Elapsed    time.Duration
	P50, P90   time.Duration
	P99, Max   time.Duration
}

// PerSecond is the measured throughput.
func (r Result) PerSecond() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

func (r Result) String() string {
	return fmt.Sprintf("%d requests in %s (%.0f/s), %d errors, latency p50 %s p90 %s p99 %s max %s",
		r.Requests, r.Elapsed.Round(time.Millisecond), r.PerSecond(), r.Errors, r.P50, r.P90, r.P99, r.Max)
}

// Run drives the server until the warm-up and the measured duration have
// passed, or ctx ends. An error means a client could not start.
func Run(ctx context.Context, c Config) (Result, error) {
	if c.Clients <= 0 || len(c.Queries) == 0 {
		return Result{}, errors.New("loadgen: need at least one client and one query")
	}
	transport := &http.Transport{MaxIdleConnsPerHost: c.Clients, MaxConnsPerHost: c.Clients, DisableCompression: true}
	defer transport.CloseIdleConnections()
	httpc := &http.Client{Transport: transport}

	clients := make([]*client, c.Clients)
	for i := range clients {
		cl := &client{http: httpc, url: c.URL, next: i, modern: c.Era == Modern}
		if c.Era != "" && c.Era != Legacy && c.Era != Modern {
			return Result{}, fmt.Errorf("loadgen: unknown era %q; want %s or %s", c.Era, Legacy, Modern)
		}
		for _, q := range c.Queries {
			b, _ := json.Marshal(q)
			cl.queries = append(cl.queries, string(b))
		}
		if err := cl.open(ctx); err != nil {
			return Result{}, fmt.Errorf("client %d: %w", i, err)
		}
		clients[i] = cl
	}
	var wg sync.WaitGroup
	start := time.Now()
	measureFrom, stopAt := start.Add(c.Warmup), start.Add(c.Warmup+c.Duration)
	for _, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl.loop(ctx, measureFrom, stopAt)
		}()
	}
	wg.Wait()
	elapsed := time.Since(measureFrom)
	if end := time.Now(); end.After(stopAt) {
		elapsed = stopAt.Sub(measureFrom) + end.Sub(stopAt)
	}
	var r Result
	var all []time.Duration
	for _, cl := range clients {
		all = append(all, cl.latencies...)
		r.Errors += cl.errors
		if r.FirstError == "" {
			r.FirstError = cl.firstError
		}
	}
	slices.Sort(all)
	r.Requests, r.Elapsed = len(all), elapsed
	if n := len(all); n > 0 {
		at := func(p float64) time.Duration { return all[min(n-1, int(p*float64(n)))] }
		r.P50, r.P90, r.P99, r.Max = at(0.50), at(0.90), at(0.99), all[n-1]
	}
	return r, nil
}

type client struct {
	http    *http.Client
	url     string
	session string
	queries []string // JSON-encoded
	next    int
	id      int
	modern  bool

	latencies  []time.Duration
	errors     int
	firstError string
}

const protocolVersion = Legacy

// modernMeta is what every 2026-07-28 request carries in params.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + Modern + `","io.modelcontextprotocol/clientCapabilities":{}},`

// open performs the handshake and keeps the session id; a modern client
// has none to perform.
func (c *client) open(ctx context.Context) error {
	if c.modern {
		return nil
	}
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + protocolVersion + `","capabilities":{},"clientInfo":{"name":"3gs-loadgen","version":"1"}}}`
	resp, b, err := c.post(ctx, body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`"result"`)) {
		return fmt.Errorf("initialize: %s %s", resp.Status, b)
	}
	c.session = resp.Header.Get("Mcp-Session-Id")
	resp, b, err = c.post(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("notifications/initialized: %s %s", resp.Status, b)
	}
	return nil
}

func (c *client) loop(ctx context.Context, measureFrom, stopAt time.Time) {
	for ctx.Err() == nil {
		c.id++
		q := c.queries[c.next%len(c.queries)]
		c.next++
		meta := ""
		if c.modern {
			meta = modernMeta
		}
		body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(c.id) + `,"method":"tools/call","params":{` + meta + `"name":"get_sources","arguments":{"query":` + q + `}}}`
		start := time.Now()
		if start.After(stopAt) {
			return
		}
		resp, b, err := c.post(ctx, body)
		took := time.Since(start)
		if err == nil && (resp.StatusCode != http.StatusOK || !bytes.HasPrefix(b, []byte(`{"jsonrpc":"2.0","id":`+strconv.Itoa(c.id)+`,"result":`))) {
			err = fmt.Errorf("%s %.200s", resp.Status, b)
		}
		if start.Before(measureFrom) {
			continue
		}
		if err != nil {
			c.errors++
			if c.firstError == "" {
				c.firstError = fmt.Sprintf("query %s: %v", q, err)
			}
			continue
		}
		c.latencies = append(c.latencies, took)
	}
}

func (c *client) post(ctx context.Context, body string) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader([]byte(body)))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	switch {
	case c.modern:
		req.Header.Set("Mcp-Protocol-Version", Modern)
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "get_sources")
	case c.session != "":
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}
