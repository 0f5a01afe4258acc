package httpserver

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/internal/jsonrpc"
)

// gate refuses, with 403, a request whose Host is not one this server
// answers to or whose Origin is not allowed. Browsers always send Origin on
// a cross-origin POST, so a page on another site (or on a DNS name rebound
// to 127.0.0.1) cannot drive the server; clients that are not browsers
// send no Origin and pass.
func (s *Server) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := hostname(r.Host)
		if len(s.hosts) > 0 && !s.hosts[host] {
			s.refuse(w, r, "Host "+quoteHeader(r.Host)+" is not served here: this server is bound to loopback and answers only to localhost, 127.0.0.1 and [::1]. Behind a proxy that keeps the Host header, start it with --allow-host NAME.")
			return
		}
		if origins, sent := r.Header["Origin"]; sent && !s.originAllowed(origins, host) {
			s.refuse(w, r, "Origin "+quoteHeader(strings.Join(origins, ", "))+" is not allowed. A web page may call this server only from a loopback origin or one named by --allow-origin.")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) refuse(w http.ResponseWriter, r *http.Request, why string) {
	if r.URL.Path == "/mcp" {
		writeRPCError(w, http.StatusForbidden, nil, codeInvalidRequest, "Forbidden: "+why)
		return
	}
	writeProblem(w, http.StatusForbidden, why)
}

// originAllowed: exactly one Origin value, either listed by --allow-origin
// or a loopback origin sent to a loopback Host (a page served by this same
// machine, such as a local inspector).
func (s *Server) originAllowed(values []string, host string) bool {
	if len(values) != 1 {
		return false
	}
	o := NormalOrigin(values[0])
	if o == "" {
		return false
	}
	if s.origins[o] {
		return true
	}
	u, _ := url.Parse(o)
	return isLoopback(u.Hostname()) && isLoopback(host)
}

// NormalOrigin returns origin as scheme://host[:port], lower case and
// without the scheme's default port; "" when it is not an http(s) origin
// (for example "null", which sandboxed pages and files send).
func NormalOrigin(origin string) string {
	u, err := url.Parse(strings.TrimSpace(origin))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return ""
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host
}

// hostname is the host part of a Host header, lower case, without port or
// IPv6 brackets.
func hostname(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		hostport = h
	}
	return strings.ToLower(strings.Trim(hostport, "[]"))
}

// LoopbackHosts are the names a loopback listener answers to.
var LoopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// isLoopback reports whether host names this machine's loopback interface.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// IsLoopbackAddr reports whether a listen address binds loopback only.
func IsLoopbackAddr(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	return err == nil && isLoopback(strings.ToLower(h))
}

// quoteHeader shows a client-sent value in a message, bounded and printable.
func quoteHeader(v string) string {
	const limit = 100
	if len(v) > limit {
		v = v[:limit] + "…"
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, `"`+v+`"`)
}

// requestLog is what the MCP endpoint learns about a request, for its
// access log line.
type requestLog struct {
	rpc, tool, session string
}

// recorder remembers the status and size of a response.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int
	// info is filled by the handlers (logInfo), which find it through the
	// writer: carrying it in the request's context cost a context and a
	// copy of the request on every request.
	info requestLog
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (for the body
// deadline).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

// accessLog writes one structured line per request to the log (stderr):
// what was asked and how it went, never a token or a whole session id.
func (s *Server) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.opt.AccessLog.Off || !s.opt.Log.Enabled(r.Context(), slog.LevelInfo) {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		info := &rec.info
		defer func() {
			status := rec.status
			aborted := recover()
			if status == 0 && aborted == nil {
				status = http.StatusOK
			}
			if !s.admitAccessLine(status, aborted != nil) {
				if aborted != nil {
					panic(aborted)
				}
				return
			}
			// Everything the client chose is shortened: a megabyte method
			// name must not become a megabyte of log per request.
			attrs := make([]slog.Attr, 0, 10)
			attrs = append(attrs,
				slog.String("method", jsonrpc.Brief(r.Method)),
				slog.String("path", jsonrpc.Brief(r.URL.Path)),
				slog.Int("status", status),
				slog.Int("bytes", rec.bytes),
				slog.Duration("duration", time.Since(start)),
				slog.String("remote", r.RemoteAddr),
			)
			if info.rpc != "" {
				attrs = append(attrs, slog.String("rpc", jsonrpc.Brief(info.rpc)))
			}
			if info.tool != "" {
				attrs = append(attrs, slog.String("tool", jsonrpc.Brief(info.tool)))
			}
			if info.session != "" {
				attrs = append(attrs, slog.String("session", info.session))
			}
			if aborted != nil {
				attrs = append(attrs, slog.Bool("aborted", true))
			}
			s.opt.Log.LogAttrs(context.Background(), slog.LevelInfo, "http", attrs...)
			if aborted != nil {
				panic(aborted)
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

// logInfo returns the request's access-log record, kept by the writer the
// access log passed down; a throwaway one when access logging is off.
func logInfo(w http.ResponseWriter) *requestLog {
	if rec, ok := w.(*recorder); ok {
		return &rec.info
	}
	return &requestLog{}
}
