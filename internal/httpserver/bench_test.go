package httpserver_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/httpserver"
)

// BenchmarkGetSourcesHTTP is one get_sources call in a 2025-11-25 session
// over a keep-alive loopback connection, client included, with the access
// log on (to a buffer). In parallel with -cpu N, N clients.
func BenchmarkGetSourcesHTTP(b *testing.B) {
	h := newHarness(b, httpserver.Options{})
	r := h.post(initialize)
	sid := r.header.Get("Mcp-Session-Id")
	transport := &http.Transport{MaxIdleConnsPerHost: 256}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":"how do I learn the rust programming language"}}}`
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("POST", h.ts.URL+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Fatal(resp.Status)
			}
		}
	})
}
