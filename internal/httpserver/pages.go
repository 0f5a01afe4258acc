package httpserver

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/pages"
)

// The headers of every page: a Content-Security-Policy that allows no
// script at all and styles only from this server, no framing, no
// sniffing, and no Referer sent to the sources people follow.
var (
	htmlContentType = []string{"text/html; charset=utf-8"}
	cssContentType  = []string{"text/css; charset=utf-8"}
	svgContentType  = []string{"image/svg+xml"}
	pageCSP         = []string{"default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"}
	noReferrer      = []string{"no-referrer"}
	denyFrames      = []string{"DENY"}
	cacheForever    = []string{"public, max-age=31536000, immutable"}
	cacheDay        = []string{"public, max-age=86400"}
)

// routePages adds the pages for people to mux: / (with ?q= to search and
// ?page= to browse), /c/{slug}, /provenance, /network, /proposals, the
// stylesheet and the favicon.
func (s *Server) routePages(mux *http.ServeMux) {
	mux.HandleFunc("/{$}", s.servePage)
	mux.HandleFunc("/c/{slug}", s.servePage)
	mux.HandleFunc("/provenance", s.servePage)
	mux.HandleFunc("/network", s.servePage)
	mux.HandleFunc("/proposals", s.servePage)
	mux.HandleFunc("/static/{name}", s.serveStatic)
	mux.HandleFunc("/favicon.ico", s.serveStatic)
	mux.HandleFunc("/favicon.svg", s.serveStatic)
}

// servePage answers a page. Pages are admitted like the audit log's
// readers: a place among --max-concurrent of their own, so that however
// many people browse, agents' requests keep theirs.
func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	if !readOnly(w, r) {
		return
	}
	b := s.backend.Load()
	switch {
	case b == nil:
		w.Header()["Retry-After"] = retryAfter
		writeProblem(w, http.StatusServiceUnavailable, "the registry is still loading; retry shortly")
		return
	case b.Pages == nil:
		writeProblem(w, http.StatusNotFound, "this server serves no pages")
		return
	}
	select {
	case s.pageSlots <- struct{}{}:
		defer func() { <-s.pageSlots }()
	default:
		w.Header()["Retry-After"] = retryAfter
		writeProblem(w, http.StatusServiceUnavailable, "server busy: "+strconv.Itoa(cap(s.pageSlots))+" page requests are already running (--max-concurrent); retry shortly")
		return
	}
	ctx := auth.WithBaseURL(r.Context(), s.baseURL(r))
	site, l := b.Pages, pages.Links{}
	var body []byte
	var err error
	switch p := r.URL.Path; {
	case p == "/" || p == "/registry":
		q := r.URL.Query()
		switch {
		case q.Has("q"):
			query := q.Get("q")
			if len(query) > pages.MaxQuery {
				writeProblem(w, http.StatusRequestURITooLong, "the query is longer than "+strconv.Itoa(pages.MaxQuery)+" bytes; a few words name a topic")
				return
			}
			body, err = site.Search(ctx, l, query)
		default:
			n := 1
			if v := q.Get("page"); v != "" {
				if !wholeNumber(v) {
					writeProblem(w, http.StatusBadRequest, "page: "+strconv.Quote(v)+" is not a whole number")
					return
				}
				n, _ = strconv.Atoi(v)
			}
			body, err = site.Home(ctx, l, n, s.baseURL(r))
		}
	case strings.HasPrefix(p, "/c/"):
		body, err = site.Category(ctx, l, r.PathValue("slug"))
	default:
		switch p {
		case "/provenance":
			body, err = site.Provenance(ctx, l)
		case "/network":
			body, err = site.Network(ctx, l)
		case "/proposals":
			body, err = site.Proposals(ctx, l)
		}
	}
	status := http.StatusOK
	switch {
	case errors.Is(err, pages.ErrNotFound) && body != nil:
		status = http.StatusNotFound
	case errors.Is(err, pages.ErrNotFound):
		writeProblem(w, http.StatusNotFound, "no such page: "+r.URL.String())
		return
	case err != nil:
		s.opt.Log.Error("rendering a page", "path", r.URL.Path, "err", err)
		writeProblem(w, http.StatusInternalServerError, "the page could not be rendered; the server's log says why")
		return
	}
	h := w.Header()
	h["Content-Type"] = htmlContentType
	h["Cache-Control"] = noCache
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	pageHeaders(h)
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// pageHeaders are the security headers of pages and their files.
func pageHeaders(h http.Header) {
	h["Content-Security-Policy"] = pageCSP
	h["X-Content-Type-Options"] = noSniff
	h["Referrer-Policy"] = noReferrer
	h["X-Frame-Options"] = denyFrames
}

// serveStatic answers the stylesheet, whose name carries its hash and so
// is cached for good, and the favicon.
func (s *Server) serveStatic(w http.ResponseWriter, r *http.Request) {
	if !readOnly(w, r) {
		return
	}
	var data []byte
	h := w.Header()
	switch {
	case r.URL.Path == "/static/"+pages.CSSName:
		data, h["Content-Type"], h["Cache-Control"] = pages.CSS, cssContentType, cacheForever
	case r.URL.Path == "/favicon.ico" || r.URL.Path == "/favicon.svg":
		data, h["Content-Type"], h["Cache-Control"] = pages.Favicon, svgContentType, cacheDay
	default:
		writeProblem(w, http.StatusNotFound, "no such file: "+r.URL.Path)
		return
	}
	pageHeaders(h)
	h["Content-Length"] = []string{strconv.Itoa(len(data))}
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(data)
	}
}

// wantsHTML: a browser navigating to the URL (Sec-Fetch-Dest: document,
// which only browsers send) that asks for HTML and does not name JSON, so
// /registry may answer with the home page. Any other client, including
// 3gs's own fetchers that accept text/html from curators' pages, gets the
// registry's bytes.
func wantsHTML(r *http.Request) bool {
	a := r.Header.Get("Accept")
	return r.Header.Get("Sec-Fetch-Dest") == "document" && strings.Contains(a, "text/html") && !strings.Contains(a, "json")
}
