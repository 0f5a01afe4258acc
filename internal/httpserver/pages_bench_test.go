package httpserver_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	threegs "github.com/three-good-sources/3gs"
	"github.com/three-good-sources/3gs/internal/httpserver"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/pages"
	"github.com/three-good-sources/3gs/internal/registry/registrytest"
)

// BenchmarkPages renders /, a search (/?q=) and a category (/c/{slug})
// through the whole handler (gate, admission, access log) at 16
// categories (the shipped registry), 1,000 and 100,000 (generated, as
// the scale benchmarks generate them); bytes/page is the page's size.
// The 100,000-category registry takes a minute and about 2 GB to build:
//
//	go test ./internal/httpserver -run '^$' -bench Pages -benchtime 200x
func BenchmarkPages(b *testing.B) {
	for _, n := range []int{16, 1000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			data, query := threegs.DefaultRegistry, "how do I learn rust"
			if n != 16 {
				doc := registrytest.Generate(n, 7)
				data, query = registrytest.Encode(n, 7), registrytest.Queries(doc, 1, 3)[0]
			}
			h := pageHandlers(b, data, nil)
			srv := httpserver.New(httpserver.Options{Hosts: httpserver.LoopbackHosts})
			srv.SetBackend(httpserver.Backend{
				MCP:       mcp.NewServer(mcp.Config{Handlers: h, Version: "bench", Log: slog.New(slog.DiscardHandler)}),
				Published: h.Published,
				Pages:     pages.New(pages.Config{Tools: h}),
			})
			handler := srv.Handler()
			slug := h.Published().Registry.Categories()[n/2].Slug
			for _, p := range []struct{ name, path string }{
				{"home", "/"},
				{"search", "/?q=" + url.QueryEscape(query)},
				{"category", "/c/" + slug},
			} {
				b.Run(p.name, func(b *testing.B) {
					var size int
					b.ReportAllocs()
					for b.Loop() {
						w := httptest.NewRecorder()
						handler.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+p.path, nil))
						if w.Code != http.StatusOK {
							b.Fatalf("%s: %d %s", p.path, w.Code, w.Body)
						}
						size = w.Body.Len()
					}
					b.ReportMetric(float64(size), "bytes/page")
				})
			}
		})
	}
}
