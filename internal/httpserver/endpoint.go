package httpserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/jsonrpc"
	"github.com/three-good-sources/3gs/internal/mcp"
)

const (
	codeInvalidRequest = jsonrpc.CodeInvalidRequest
	codeInternalError  = jsonrpc.CodeInternalError
	codeHeaderMismatch = jsonrpc.CodeHeaderMismatch
)

// Headers of the Streamable HTTP transport, in Go's canonical form.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
)

// unversionedDefault is the version a legacy request without an
// MCP-Protocol-Version header is taken to speak. Sending it explicitly
// therefore means the same as sending nothing, and is accepted on any
// legacy session (the conformance suite's clients do so).
const unversionedDefault = "2025-03-26"

// serveMCP is the MCP endpoint: POST carries one JSON-RPC message; DELETE
// ends a legacy session. A POST goes through four steps, each of which may
// answer and stop: accept (method, readiness, media types), read (the body,
// bounded, before admission), admit (a --max-concurrent place), route (by
// message kind and protocol era).
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	// Answers are per caller (the token picks the tools listed) and per
	// moment: no cache on the way may keep one.
	w.Header()["Cache-Control"] = noStore
	b, ok := s.accept(w, r)
	if !ok {
		return
	}
	body := new(bytes.Buffer)
	var held int64 // bytes of the body budget this request holds
	defer func() { s.bodyBytes.Add(-held) }()
	if !s.read(w, r, body, &held) {
		return
	}
	release, ok := s.admit(w)
	if !ok {
		return
	}
	defer release()
	s.route(r.Context(), w, r, b, body.Bytes())
}

// accept checks what can be checked before the body is read: the HTTP
// method (DELETE ends a session here), that the registry is loaded, and
// the media types. It returns the backend to answer with.
func (s *Server) accept(w http.ResponseWriter, r *http.Request) (*backend, bool) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodDelete:
		s.endSession(w, r)
		return nil, false
	default:
		w.Header()["Allow"] = allowMCP
		writeRPCError(w, http.StatusMethodNotAllowed, nil, codeInvalidRequest, "Method Not Allowed: POST one JSON-RPC message to /mcp (DELETE ends a session); this server opens no GET event stream")
		return nil, false
	}
	b := s.backend.Load()
	if b == nil {
		w.Header()["Retry-After"] = retryAfter
		writeRPCError(w, http.StatusServiceUnavailable, nil, codeInternalError, "Service Unavailable: the registry is still loading; retry shortly")
		return nil, false
	}
	if !isJSON(r.Header.Get("Content-Type")) {
		writeRPCError(w, http.StatusUnsupportedMediaType, nil, codeInvalidRequest, "Unsupported Media Type: send the JSON-RPC message with Content-Type: application/json")
		return nil, false
	}
	if !acceptsJSON(r.Header.Values("Accept")) {
		writeRPCError(w, http.StatusNotAcceptable, nil, codeInvalidRequest, "Not Acceptable: this server answers in application/json; send Accept: application/json, text/event-stream")
		return nil, false
	}
	return b, true
}

// read reads the whole body into body before the request takes a place: a
// client that starts a body and never finishes it holds only its own
// connection, for at most Options.BodyTimeout, never a place of a request
// that has arrived. held counts the body budget taken, for the caller to
// give back.
func (s *Server) read(w http.ResponseWriter, r *http.Request, body *bytes.Buffer, held *int64) bool {
	tooLarge := func() string {
		return "Payload Too Large: the message is longer than " + strconv.FormatInt(s.opt.MaxMessageBytes, 10) + " bytes (--max-message-bytes)"
	}
	if r.ContentLength > s.opt.MaxMessageBytes {
		writeRPCError(w, http.StatusRequestEntityTooLarge, nil, codeInvalidRequest, tooLarge())
		return false
	}
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.opt.BodyTimeout)) // not every writer can; the server's ReadTimeout still bounds those
	if err := s.readBody(body, r.Body, held); err != nil {
		w.Header()["Connection"] = connectionClose
		switch {
		case errors.Is(err, errBodyBudget):
			w.Header()["Retry-After"] = retryAfter
			writeRPCError(w, http.StatusServiceUnavailable, nil, codeInternalError, "Server busy: the bodies of other requests fill the memory set aside for them; retry shortly")
		case errors.Is(err, os.ErrDeadlineExceeded):
			writeRPCError(w, http.StatusRequestTimeout, nil, codeInvalidRequest, "Request Timeout: the body did not arrive within "+s.opt.BodyTimeout.String()+"; send the whole message at once")
		default:
			writeRPCError(w, http.StatusBadRequest, nil, codeInvalidRequest, "Bad Request: the body could not be read")
		}
		return false
	}
	if int64(body.Len()) > s.opt.MaxMessageBytes {
		writeRPCError(w, http.StatusRequestEntityTooLarge, nil, codeInvalidRequest, tooLarge())
		return false
	}
	return true
}

// admit takes one of the --max-concurrent places, or answers 503.
func (s *Server) admit(w http.ResponseWriter) (release func(), ok bool) {
	select {
	case s.slots <- struct{}{}:
		return func() { <-s.slots }, true
	default:
		w.Header()["Retry-After"] = retryAfter
		writeRPCError(w, http.StatusServiceUnavailable, nil, codeInternalError, "Server busy: "+strconv.Itoa(cap(s.slots))+" requests are already running (--max-concurrent); retry shortly")
		return nil, false
	}
}

// route parses the message and answers it by kind (a client's response is
// acknowledged, a notification accepted, a request run) and, for a
// request, by protocol era: 2026-07-28 requests carry their version and
// need no session; older ones belong to a session opened by initialize.
func (s *Server) route(ctx context.Context, w http.ResponseWriter, r *http.Request, b *backend, body []byte) {
	m, id, perr := jsonrpc.Parse(body)
	if perr != nil {
		writeJSON(w, http.StatusBadRequest, jsonrpc.AppendError(nil, id, perr))
		return
	}
	info := logInfo(w)
	info.rpc = m.Method
	switch m.Kind {
	case jsonrpc.KindResponse:
		w.WriteHeader(http.StatusAccepted) // nothing of ours awaits a client's reply
		return
	case jsonrpc.KindNotification:
		s.notification(w, r, m)
		return
	}
	req := mcp.Prepare(m)
	if m.Method == "tools/call" {
		info.tool, _ = req.ToolName()
	}
	ctx, ok := s.authorize(ctx, w, r, b, m)
	if !ok {
		return
	}
	ctx = auth.WithBaseURL(ctx, s.baseURL(r))
	if m.Method == "tools/call" {
		// For bounds kept per client (propose_change's rate).
		ctx = auth.WithClient(ctx, auth.Client{Addr: clientAddr(r), Session: r.Header.Get(headerSessionID)})
	}
	if req.Malformed() { // neither era can be told; say what is wrong with the params
		s.answer(ctx, w, b.stateless, &req)
		return
	}
	if version, modern := req.Modern(); modern {
		if problem := checkHeaders(r, &req, version); problem != "" {
			writeRPCError(w, http.StatusBadRequest, m.ID, codeHeaderMismatch, "Header mismatch: "+problem)
			return
		}
		s.answer(ctx, w, b.stateless, &req)
		return
	}
	s.legacy(ctx, w, r, b, &req, info)
}

// authorize puts the Authorization header's token, if any, into ctx. Two
// headers are refused (a proxy may check one and we would read the
// other); a token that is not recognised is logged and served as public.
func (s *Server) authorize(ctx context.Context, w http.ResponseWriter, r *http.Request, b *backend, m *jsonrpc.Message) (context.Context, bool) {
	hs := r.Header["Authorization"]
	switch len(hs) {
	case 0:
		return ctx, true
	case 1:
	default:
		writeRPCError(w, http.StatusBadRequest, m.ID, codeInvalidRequest, "Bad Request: "+strconv.Itoa(len(hs))+" Authorization headers; send one, of the form Authorization: Bearer TOKEN")
		return ctx, false
	}
	token, isBearer := bearer(hs[0])
	s.checkToken(r, b, isBearer, token, m.Method)
	return auth.WithTransportToken(ctx, token), true
}

// bodyChunk is the unit in which bodies take from the body budget.
const bodyChunk = 64 << 10

var errBodyBudget = errors.New("body budget exhausted")

// readBody reads r into body, up to one byte past MaxMessageBytes, taking
// from the server's body budget as the body grows. Reading bodies before
// admission means as many are read at once as there are connections; the
// budget keeps their memory bounded, at what the request places bounded
// it to before. A body takes 64 KiB at a time, as it arrives, so a client
// that sends slowly holds one step, not a whole message's worth.
func (s *Server) readBody(body *bytes.Buffer, r io.Reader, held *int64) error {
	limit := s.opt.MaxMessageBytes + 1
	for int64(body.Len()) < limit {
		if s.bodyBytes.Add(bodyChunk) > s.bodyBudget {
			s.bodyBytes.Add(-bodyChunk)
			return errBodyBudget
		}
		*held += bodyChunk
		want := min(bodyChunk, limit-int64(body.Len()))
		n, err := body.ReadFrom(io.LimitReader(r, want))
		if err != nil {
			return err
		}
		if n < want {
			return nil // the whole body
		}
	}
	return nil
}

// legacy serves a request of the initialize-based era: initialize opens a
// session, every later request names it.
func (s *Server) legacy(ctx context.Context, w http.ResponseWriter, r *http.Request, b *backend, req *mcp.Request, info *requestLog) {
	m := req.Msg
	version, versioned := oneHeader(r, headerProtocolVersion)
	if m.Method == "initialize" {
		if versioned && !slices.Contains(mcp.LegacyVersions, version) {
			writeRPCError(w, http.StatusBadRequest, m.ID, codeInvalidRequest, "Bad Request: unsupported MCP-Protocol-Version "+quoteHeader(version)+"; supported: "+strings.Join(mcp.SupportedVersions, ", "))
			return
		}
		ms := b.MCP.NewSession()
		out, _ := ms.Answer(ctx, req, getResponse())
		defer putResponse(out)
		if ms.Version() != "" { // the handshake succeeded
			sess := s.sessions.add(ms, clientAddr(r))
			if sess == nil { // every session that could make way is running a request, which ends soon
				s.sessionsBusy(w, m.ID)
				return
			}
			w.Header()[headerSessionID] = []string{sess.id}
			info.session = sess.id[:8]
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	id := r.Header.Get(headerSessionID)
	if id == "" {
		writeRPCError(w, http.StatusBadRequest, m.ID, codeInvalidRequest, "Bad Request: Mcp-Session-Id header is required; send initialize first to open a session, or name protocol version 2026-07-28 in params._meta, which needs none")
		return
	}
	// A session another replica opened is taken up here from its id.
	sess, busy := s.sessions.open(id, clientAddr(r), b.MCP)
	switch {
	case busy:
		s.sessionsBusy(w, m.ID)
		return
	case sess == nil:
		writeRPCError(w, http.StatusNotFound, m.ID, codeInvalidRequest, sessionNotFound)
		return
	}
	info.session = sess.id[:8]
	if versioned && version != sess.mcp.Version() && version != unversionedDefault {
		writeRPCError(w, http.StatusBadRequest, m.ID, codeInvalidRequest, "Bad Request: MCP-Protocol-Version "+quoteHeader(version)+" does not match the version this session negotiated, "+sess.mcp.Version())
		return
	}
	running := sess.requests.Start(ctx, m.ID)
	defer sess.requests.Finish(running)
	s.answer(running.Context(), w, sess.mcp, req)
}

// answer runs the request and writes its response. A request cancelled
// before it finished (notifications/cancelled, or the client hung up) gets
// no answer: the connection is dropped instead. A handler that panics
// answers Internal error for its request alone.
func (s *Server) answer(ctx context.Context, w http.ResponseWriter, sess *mcp.Session, req *mcp.Request) {
	buf := getResponse()
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.opt.Log.Error("request panicked", "method", jsonrpc.Brief(req.Msg.Method), "panic", v, "stack", string(debug.Stack()))
			writeRPCError(w, http.StatusInternalServerError, req.Msg.ID, codeInternalError, "Internal error")
		}
	}()
	out, st := sess.Answer(ctx, req, buf)
	defer putResponse(out)
	if ctx.Err() != nil {
		panic(http.ErrAbortHandler)
	}
	status := http.StatusOK
	switch st {
	case mcp.Rejected:
		status = http.StatusBadRequest
	case mcp.NoSuchMethod:
		status = http.StatusNotFound
	}
	writeJSON(w, status, out)
}

// notification accepts a notification. In a legacy session,
// notifications/cancelled stops the named request.
func (s *Server) notification(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
	if id := r.Header.Get(headerSessionID); id != "" {
		sess := s.sessions.get(id)
		if sess == nil {
			// A session opened elsewhere, not held here, is accepted
			// without being taken up: none of its requests runs here,
			// so there is nothing to cancel (a cancellation reaches only
			// the replica that received it).
			if _, ok := s.sessions.adoptable(id); !ok {
				writeRPCError(w, http.StatusNotFound, nil, codeInvalidRequest, sessionNotFound)
				return
			}
		} else if m.Method == "notifications/cancelled" {
			sess.requests.Cancelled(m.Params)
		}
	}
	w.WriteHeader(http.StatusAccepted)
}

// sessionNotFound answers a request naming a session that is not open.
const sessionNotFound = "Session not found: it was ended, expired, sat idle too long, or made way for newer sessions while the server was full, or it was opened by a server that does not share this one's session secret; send initialize to open a new one"

// sessionsBusy answers a request that needs a place in the session table
// when every session that could make way is running a request.
func (s *Server) sessionsBusy(w http.ResponseWriter, id []byte) {
	w.Header()["Retry-After"] = retryAfter
	writeRPCError(w, http.StatusServiceUnavailable, id, codeInternalError, "Server busy: every open session (--max-sessions "+strconv.Itoa(s.sessions.max)+", --max-sessions-per-client "+strconv.Itoa(s.sessions.perClient)+") is running a request; retry shortly, or use protocol version 2026-07-28, which needs no session")
}

// clientAddr is the address a request came from, without its port: the
// unit the per-client session bound counts.
func clientAddr(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// endSession answers DELETE /mcp.
func (s *Server) endSession(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(headerSessionID)
	switch {
	case id == "":
		writeRPCError(w, http.StatusBadRequest, nil, codeInvalidRequest, "Bad Request: DELETE /mcp ends the session its Mcp-Session-Id header names, and there is none")
	case !s.sessions.end(id): // ends it here only; see sessionTable
		writeRPCError(w, http.StatusNotFound, nil, codeInvalidRequest, "Session not found: it was already ended, expired or sat idle too long")
	default:
		logInfo(w).session = id[:min(8, len(id))]
		w.WriteHeader(http.StatusNoContent)
	}
}

// isJSON reports whether a Content-Type is application/json (in UTF-8,
// when a charset is named).
func isJSON(ct string) bool {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return false
	}
	cs, named := params["charset"]
	return !named || strings.EqualFold(cs, "utf-8")
}

// acceptsJSON reports whether Accept headers admit application/json.
// Clients must send one; a missing header is refused like one without it.
func acceptsJSON(values []string) bool {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			if q, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(q, 64); err != nil || f <= 0 {
					continue
				}
			}
			if mt == "application/json" || mt == "application/*" || mt == "*/*" {
				return true
			}
		}
	}
	return false
}

// Shared header values; net/http only reads them.
var (
	jsonContentType = []string{"application/json"}
	retryAfter      = []string{"1"}
	connectionClose = []string{"close"}
	allowMCP        = []string{"POST, DELETE"}
	noSniff         = []string{"nosniff"}
)

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Cache-Control"] = noStore
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	h["X-Content-Type-Options"] = noSniff
	w.WriteHeader(status)
	w.Write(body)
}

// writeRPCError answers with a JSON-RPC error: for id, or null when the
// request's id is unknown.
func writeRPCError(w http.ResponseWriter, status int, id []byte, code int, msg string) {
	if id == nil {
		id = []byte("null")
	}
	writeJSON(w, status, jsonrpc.AppendError(nil, id, &jsonrpc.Error{Code: code, Message: msg}))
}

// Responses are recycled: under load they would otherwise be most of the
// garbage. The pool pays: BenchmarkGetSourcesHTTP (client included)
// allocates 14,460 B/op with it and 18,580 without (+28%). A pool of
// request bodies saved 4% (15,050 B/op without) and went.
var responses = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

const maxPooled = 64 << 10

func getResponse() []byte { return (*responses.Get().(*[]byte))[:0] }

func putResponse(b []byte) {
	if cap(b) <= maxPooled {
		b = b[:0]
		responses.Put(&b)
	}
}
