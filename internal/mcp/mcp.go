// Package mcp is the Model Context Protocol core of 3gs: lifecycle, version
// negotiation for both protocol eras, and the tools methods, driven by the
// generated dispatch table. It answers one parsed message at a time and
// knows nothing of transports.
//
// Two eras are served side by side. A session that starts with initialize
// is legacy (2024-11-05 to 2025-11-25): requests before initialize are
// refused. A request whose params._meta names a protocol version is modern
// (2026-07-28): stateless, answered without initialize, results marked
// resultType "complete".
package mcp

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bytedance/sonic"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/jsonrpc"
)

// ServerName is the serverInfo name clients see.
const ServerName = "three-good-sources"

// Protocol versions.
const (
	ModernVersion = "2026-07-28"
	LatestLegacy  = "2025-11-25"
)

// LegacyVersions are the handshake versions initialize accepts, newest first.
var LegacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// SupportedVersions is every version served, newest first.
var SupportedVersions = append([]string{ModernVersion}, LegacyVersions...)

// Keys of params._meta in the modern era.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
)

// Instructions tell the model, in initialize and server/discover, how to
// use the server.
const Instructions = "3gs answers 'where should I read about X?' with three human-vetted sources. " +
	"Call get_sources with the topic in plain words. If no category is confident, it lists the registry's categories, those that share words with the query closest first: " +
	"pick the one that fits the question and call get_sources with its slug (two calls at most); if none fits, the registry does not cover it. " +
	"list_categories, with an optional filter, browses the topics covered; " +
	"get_provenance and get_endorsements tell who curated the registry and who vouches for it. " +
	"With a token (params._meta[\"io.3gs/token\"]), explain_match shows why a query matches, and a curator can edit the registry."

// FederationInstructions end the instructions of a node that follows the
// curators its registry endorses (Config.Federated): their registries may
// cover what this one does not, and only get_federated_sources asks them.
const FederationInstructions = " This node also follows the curators its curator endorses: when get_sources finds nothing that fits, get_federated_sources asks their registries too."

// toolsListTTLMs is how long modern clients may cache tools/list and
// server/discover. The tools themselves change only with a new binary;
// which are listed may change with the registry (Config.Node), and a
// modern client, which holds no session, is not told: it may list the
// older set until then, and every tool stays callable.
const toolsListTTLMs = 3600000

// toolsListTTL is the member of a modern tools/list result that says so.
var toolsListTTL = `,"ttlMs":` + strconv.Itoa(toolsListTTLMs)

// Server holds what every session shares: the tool handlers, the tokens it
// accepts and the precomputed payloads. What it lists and its
// instructions follow the node's state (Node), read again on Refresh;
// the rest is fixed.
type Server struct {
	handlers gen.ToolHandlers
	version  string
	log      *slog.Logger
	keyring  *auth.Keyring
	// replicaOf is Config.ReplicaOf.
	replicaOf  string
	serverInfo []byte
	// node is Config.Node; nil when the node's state is fixed.
	node func() Node

	// view is what the node's state makes of the lists and instructions
	// now; swapped whole by Refresh.
	view atomic.Pointer[view]
	// mu serializes Refresh and guards listeners.
	mu sync.Mutex
	// listeners are the sessions told when their tools change (Listen),
	// each with what tells it.
	listeners map[*Session]func()
}

// view is the payloads one state of the node gives.
type view struct {
	node Node
	// instructions are Instructions, FederationInstructions when
	// node.Federated, and the catalog's.
	instructions string
	discover     []byte
	// lists is, per caller tier, the JSON array of the tools/list entries
	// that caller sees on this node (Listed): a few KB each.
	lists [gen.NumTiers][]byte
}

// Node is what, of the node a server runs on, its tools/list and
// instructions depend on; it may change while the server runs (a reload
// gains or loses peers, the registry grows).
type Node struct {
	// Federated: this node follows the curators its registry endorses, so
	// the instructions name get_federated_sources, and tools/list shows it.
	Federated bool
	// Proposals: this node takes proposals, so tools/list shows the
	// community tools (those whose schema says "listedWhen": "proposals").
	Proposals bool
	// Catalog is the registry's catalog, which ends the instructions
	// (CatalogInstructions) when it is small enough to list whole; its
	// Version is "" for none.
	Catalog Catalog
}

// Catalog is every category of the registry of version Version, by slug.
type Catalog struct {
	Version string
	Slugs   []string
}

func (n Node) equal(o Node) bool {
	return n.Federated == o.Federated && n.Proposals == o.Proposals &&
		n.Catalog.Version == o.Catalog.Version && slices.Equal(n.Catalog.Slugs, o.Catalog.Slugs)
}

// Config is what a server is made of.
type Config struct {
	Handlers gen.ToolHandlers
	// Version is reported in serverInfo.
	Version string
	Log     *slog.Logger
	// Keyring holds the tokens that unlock user and admin tools; nil
	// means every caller is public.
	Keyring *auth.Keyring
	// ReplicaOf, for a read replica, is the origin it follows: a tool the
	// caller cannot call here (above their tier, or unknown) answers that
	// edits go there, since an admin token of the origin is not one of
	// this node's.
	ReplicaOf string
	// Federated, Proposals and Catalog are the node's state (Node) when
	// Node is nil.
	Federated bool
	Proposals bool
	Catalog   Catalog
	// Node, when set, is the node's state as it is now: read when the
	// server is made and again on each Refresh, in place of the three
	// fields above.
	Node func() Node
}

func (c Config) state() Node {
	if c.Node != nil {
		return c.Node()
	}
	return Node{Federated: c.Federated, Proposals: c.Proposals, Catalog: c.Catalog}
}

// CatalogInstructions list every category of the registry of version
// version by slug, so an agent may pass a slug on its first call; a
// get_sources answer that finds no confident category then points here
// (its catalog_version) instead of listing them again.
func CatalogInstructions(version string, slugs []string) string {
	var b strings.Builder
	b.WriteString(" Categories (registry ")
	b.WriteString(version)
	b.WriteString("), to pass as get_sources' slug when one plainly fits: ")
	b.WriteString(strings.Join(slugs, ", "))
	b.WriteString(".")
	return b.String()
}

// Listed reports whether a caller of tier sees t in tools/list on a node
// configured as c: a tool of the caller's tier or below (never one that
// needs a token the caller lacks), whose listedWhen condition, if any, c or
// the caller meets. A tool left out may still be called: a discoverable
// one answers with the token it needs, a community tool with why this
// node takes no proposals, get_audit_log and get_identity as always.
func Listed(t *gen.Tool, tier gen.Tier, c Config) bool {
	return listed(t, tier, c.state())
}

func listed(t *gen.Tool, tier gen.Tier, n Node) bool {
	if !t.Listed(tier) {
		return false
	}
	switch t.ListedWhen {
	case gen.ListedAlways:
		return true
	case gen.ListedWhenPeers:
		return n.Federated
	case gen.ListedWhenProposals:
		return n.Proposals
	case gen.ListedWhenToken:
		return tier > gen.TierPublic
	}
	// A condition added to the schemas and not decided here: not listed
	// (TestEveryListedWhenIsDecided fails until it is).
	return false
}

// ListedFor names, in tools/list order, the tools a caller of tier sees
// on a node configured as c.
func ListedFor(tier gen.Tier, c Config) []string {
	n := c.state()
	var names []string
	for i := range gen.Tools {
		if t := &gen.Tools[i]; listed(t, tier, n) {
			names = append(names, t.Name)
		}
	}
	return names
}

// NewServer returns a server for c.
func NewServer(c Config) *Server {
	s := &Server{handlers: c.Handlers, version: c.Version, log: c.Log, keyring: c.Keyring, replicaOf: c.ReplicaOf, node: c.Node, listeners: map[*Session]func(){}}
	s.serverInfo = appendImplementation(nil, implementation{Name: ServerName, Version: c.Version, ContractVersion: gen.ContractVersion})
	s.view.Store(s.makeView(c.state()))
	return s
}

// makeView builds the payloads of node state n.
func (s *Server) makeView(n Node) *view {
	v := &view{node: n, instructions: Instructions}
	if n.Federated {
		v.instructions += FederationInstructions
	}
	if n.Catalog.Version != "" {
		v.instructions += CatalogInstructions(n.Catalog.Version, n.Catalog.Slugs)
	}
	v.discover = appendDiscover(nil, s.serverInfo, v.instructions)
	for tier := range gen.NumTiers {
		list := []byte{'['}
		for i := range gen.Tools {
			if t := &gen.Tools[i]; listed(t, gen.Tier(tier), n) {
				if len(list) > 1 {
					list = append(list, ',')
				}
				list = append(list, t.Manifest...)
			}
		}
		v.lists[tier] = append(list, ']')
	}
	return v
}

// Refresh reads the node's state again (Config.Node) and, when it
// changed, serves what it makes of it from now on: the sessions that
// begin from then on get its instructions, every tools/list its lists.
// Each session listening (Listen) whose tools/list, at a tier it asked
// with, now differs is told. Without Config.Node it does nothing.
func (s *Server) Refresh() {
	if s.node == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, n := s.view.Load(), s.node()
	if n.equal(old.node) {
		return
	}
	v := s.makeView(n)
	s.view.Store(v)
	var changed uint32
	for tier := range gen.NumTiers {
		if !bytes.Equal(old.lists[tier], v.lists[tier]) {
			changed |= 1 << tier
		}
	}
	if changed == 0 {
		return
	}
	for sess, tell := range s.listeners {
		if sess.initialized.Load() && sess.listed.Load()&changed != 0 {
			tell()
		}
	}
}

// Instructions are what initialize and server/discover tell the model
// now.
func (s *Server) Instructions() string { return s.view.Load().instructions }

// ToolsList is the JSON array tools/list answers a caller of tier with
// now.
func (s *Server) ToolsList(tier gen.Tier) []byte { return s.view.Load().lists[tier] }

// ToolsListChanged is the notification a listening session is sent when
// the tools it lists change.
const ToolsListChanged = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`

// Listen makes sess a session that can be told when the tools it lists
// change: from then on, after a Refresh that changes the tools/list of a
// tier sess asked with, tell is called, and should send sess's client
// ToolsListChanged. tell must not block. The session's initialize then
// declares tools.listChanged. A transport that cannot carry a message the
// client did not ask for does not call it. stop ends it.
func (sess *Session) Listen(tell func()) (stop func()) {
	s := sess.srv
	s.mu.Lock()
	s.listeners[sess] = tell
	s.mu.Unlock()
	sess.listening.Store(true)
	return func() {
		s.mu.Lock()
		delete(s.listeners, sess)
		s.mu.Unlock()
	}
}

// The fixed results are written by hand, exactly as sonic encodes the
// structs below (TestHandWrittenResults compares them): encoding them with
// sonic made its JIT compile encoders, and decode protocolVersion, while
// the server started and at initialize, for code and memory a stdio
// server otherwise never needs.

func appendImplementation(dst []byte, v implementation) []byte {
	dst = append(dst, `{"name":`...)
	dst = jsonrpc.AppendString(dst, v.Name)
	dst = append(dst, `,"version":`...)
	dst = jsonrpc.AppendString(dst, v.Version)
	dst = append(dst, `,"contractVersion":`...)
	dst = jsonrpc.AppendString(dst, v.ContractVersion)
	return append(dst, '}')
}

// capabilitiesJSON is serverCapabilities encoded, and
// listeningCapabilitiesJSON listeningCapabilities: the latter is a
// session's that can be told its tools changed (Listen). Modern clients
// hear of a change only on a subscriptions/listen stream, which this
// server does not open, so server/discover says false.
const (
	capabilitiesJSON          = `{"tools":{"listChanged":false}}`
	listeningCapabilitiesJSON = `{"tools":{"listChanged":true}}`
)

func appendDiscover(dst, serverInfo []byte, instructions string) []byte {
	dst = append(dst, `{"resultType":"complete","supportedVersions":[`...)
	for i, v := range SupportedVersions {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonrpc.AppendString(dst, v)
	}
	dst = append(dst, `],"capabilities":`+capabilitiesJSON+`,"instructions":`...)
	dst = jsonrpc.AppendString(dst, instructions)
	dst = append(dst, `,"_meta":{"io.modelcontextprotocol/serverInfo":`...)
	dst = append(dst, serverInfo...)
	dst = append(dst, `},"ttlMs":`...)
	dst = strconv.AppendInt(dst, toolsListTTLMs, 10)
	return append(dst, `,"cacheScope":"public"}`...)
}

func appendInitializeResult(dst []byte, version string, serverInfo []byte, instructions string, listening bool) []byte {
	dst = append(dst, `{"protocolVersion":`...)
	dst = jsonrpc.AppendString(dst, version)
	caps := capabilitiesJSON
	if listening {
		caps = listeningCapabilitiesJSON
	}
	dst = append(dst, `,"capabilities":`...)
	dst = append(dst, caps...)
	dst = append(dst, `,"serverInfo":`...)
	dst = append(dst, serverInfo...)
	dst = append(dst, `,"instructions":`...)
	dst = jsonrpc.AppendString(dst, instructions)
	return append(dst, '}')
}

// Response shapes are structs, not maps, so their key order is fixed.
type (
	// implementation is serverInfo. contractVersion is ours: the version
	// of the tool contract (schema/contract.json), so a client can tell a
	// breaking change from the version alone.
	implementation struct {
		Name            string `json:"name"`
		Version         string `json:"version"`
		ContractVersion string `json:"contractVersion"`
	}
	capabilities struct {
		Tools struct {
			ListChanged bool `json:"listChanged"`
		} `json:"tools"`
	}
	initializeResult struct {
		ProtocolVersion string                 `json:"protocolVersion"`
		Capabilities    capabilities           `json:"capabilities"`
		ServerInfo      sonic.NoCopyRawMessage `json:"serverInfo"`
		Instructions    string                 `json:"instructions"`
	}
	discoverMeta struct {
		ServerInfo implementation `json:"io.modelcontextprotocol/serverInfo"`
	}
	discoverResult struct {
		ResultType        string       `json:"resultType"`
		SupportedVersions []string     `json:"supportedVersions"`
		Capabilities      capabilities `json:"capabilities"`
		Instructions      string       `json:"instructions"`
		Meta              discoverMeta `json:"_meta"`
		TTLMs             int          `json:"ttlMs"`
		CacheScope        string       `json:"cacheScope"`
	}
	// paramsProblem is the data of an Invalid params error.
	paramsProblem struct {
		Path   string          `json:"path"`
		Reason string          `json:"reason"`
		Errors []paramsProblem `json:"errors,omitempty"`
	}
	versionProblem struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}
	tierProblem struct {
		RequiredTier string `json:"required_tier"`
		// Hint says how a token of that tier is made and given.
		Hint string `json:"hint"`
	}
)

// serverCapabilities: tools only, and no word of a change to their list;
// listeningCapabilities: a change to the list is told (Listen).
var (
	serverCapabilities    capabilities
	listeningCapabilities = capabilities{Tools: struct {
		ListChanged bool `json:"listChanged"`
	}{ListChanged: true}}
)

// Session is one client's conversation: a stdio process or, later, an HTTP
// session. The legacy handshake state lives here, and the token a stdio
// session was started with.
type Session struct {
	srv          *Server
	initialized  atomic.Bool
	version      atomic.Pointer[string] // negotiated by initialize
	defaultToken string
	// catalog is the version of the catalog of categories initialize's
	// instructions gave; nil or "" when they gave none. The tools it calls
	// see it (tooltable.WithCatalog).
	catalog atomic.Pointer[string]
	// listed has bit t set once tools/list answered a caller of tier t.
	listed atomic.Uint32
	// listening: Listen was called, so a change to the tools is told.
	listening atomic.Bool
	// as, when set (NewSessionAs), is who every request runs as.
	as *auth.Caller
}

// ForgetCatalog makes sess's tools act as if initialize had given no
// catalog: for a session taken up from its id (Streamable HTTP), whose
// client may hold the catalog of an earlier registry than the one this
// initialize gave.
func (sess *Session) ForgetCatalog() { sess.catalog.Store(nil) }

// Version is the protocol version initialize negotiated; empty before it.
func (sess *Session) Version() string {
	if v := sess.version.Load(); v != nil {
		return *v
	}
	return ""
}

// Keyring is the set of tokens the server accepts; nil when it was given
// none, so every token is unknown. Transports use it to report a token
// they received that is not recognised.
func (s *Server) Keyring() *auth.Keyring { return s.keyring }

// NewSession starts a session.
func (s *Server) NewSession() *Session { return &Session{srv: s} }

// NewSessionAs starts a session, initialized, whose every request runs
// as c, whatever token it carries: the local admin channel's, whose
// caller is the server's own user (internal/app). Its tools/call is the
// one every transport's goes through.
func (s *Server) NewSessionAs(c auth.Caller) *Session {
	sess := &Session{srv: s, as: &c}
	version := LatestLegacy
	sess.version.Store(&version)
	sess.initialized.Store(true)
	return sess
}

// NewSessionWithToken starts a session whose requests that carry no token
// of their own use token: for stdio, THREEGS_TOKEN.
func (s *Server) NewSessionWithToken(token string) *Session {
	return &Session{srv: s, defaultToken: token}
}

// params holds every params member any method reads; each method checks
// its own. Members stay raw until a method needs them.
type params struct {
	MetaRaw         []byte
	hasMeta         bool // MetaRaw is an object, decoded into meta by Prepare
	meta            meta
	ProtocolVersion []byte
	Name            []byte
	Arguments       []byte
	Cursor          []byte
	// Token is where legacy clients that cannot set _meta put a token.
	Token []byte
}

// paramKeys and metaKeys are the members params and params._meta are
// read for. A key that differs from one of them only by case is refused,
// not ignored: a lenient reader elsewhere would take "Name" for "name".
var (
	paramKeys = []string{"_meta", "protocolVersion", "name", "arguments", "cursor", "token"}
	metaKeys  = []string{"io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities", "io.3gs/token"}
)

// toolNames are the tools' names, which Prepare returns rather than a
// copy of params.name.
var toolNames = func() []string {
	names := make([]string, len(gen.Tools))
	for i := range gen.Tools {
		names[i] = gen.Tools[i].Name
	}
	return names
}()

type meta struct {
	ProtocolVersion    []byte
	ClientCapabilities []byte
	Token              []byte
}

// Handle answers one request: it appends the response line (without the
// newline) to dst and returns it. It must not be called for notifications
// or responses.
func (sess *Session) Handle(ctx context.Context, m *jsonrpc.Message, dst []byte) []byte {
	req := Prepare(m)
	out, _ := sess.Answer(ctx, &req, dst)
	return out
}

// Request is a request whose params have been read, so that a transport
// can check what it carries out of band (HTTP headers) against the body
// before Answer runs it, without reading the params twice.
type Request struct {
	Msg *jsonrpc.Message
	p   params
	// perr is why the params could not be read; Answer reports it.
	perr *jsonrpc.Error
	// The members both a transport and the core look at, each decoded
	// once: params._meta's protocol version (modern marks it present,
	// versionOK a string) and params.name (nameOK when a string).
	modern, versionOK bool
	version           string
	name              string
	nameOK            bool
}

// Prepare reads m's params.
func Prepare(m *jsonrpc.Message) Request {
	r := Request{Msg: m}
	if m.Params == nil {
		return r
	}
	var vals [6][]byte // in paramKeys order
	if !jsonrpc.Members(m.Params, paramKeys, vals[:]) {
		r.perr = invalidParams("_meta", "must be an object")
		return r
	}
	r.p = params{MetaRaw: vals[0], ProtocolVersion: vals[1], Name: vals[2], Arguments: vals[3], Cursor: vals[4], Token: vals[5]}
	// A repeated member would be read as its last copy here and perhaps as
	// its first by a proxy or a log, so neither copy is trusted.
	if kp, bad := jsonrpc.CheckKeys(m.Params, paramKeys); bad {
		r.perr = invalidParams(jsonrpc.Brief(kp.Key), kp.Reason)
		return r
	}
	if raw := r.p.MetaRaw; raw != nil && string(raw) != "null" {
		r.p.hasMeta = true
		var vals [3][]byte // in metaKeys order
		if raw[0] != '{' || !jsonrpc.Members(raw, metaKeys, vals[:]) {
			r.perr = invalidParams("_meta", "must be an object")
			return r
		}
		r.p.meta = meta{ProtocolVersion: vals[0], ClientCapabilities: vals[1], Token: vals[2]}
		if kp, bad := jsonrpc.CheckKeys(raw, metaKeys); bad {
			r.perr = invalidParams("_meta."+jsonrpc.Brief(kp.Key), kp.Reason)
			return r
		}
	}
	if r.p.hasMeta && r.p.meta.ProtocolVersion != nil {
		r.modern = true
		r.version, r.versionOK = jsonrpc.String(r.p.meta.ProtocolVersion, SupportedVersions...)
	}
	if r.p.Name != nil {
		r.name, r.nameOK = jsonrpc.String(r.p.Name, toolNames...)
	}
	return r
}

// Modern reports whether the request names its protocol version in
// params._meta (the 2026-07-28 era), and the version it names. The version
// is empty when it is not a string; Answer then refuses the request.
func (r *Request) Modern() (version string, ok bool) { return r.version, r.modern }

// Malformed reports whether the params could not be read at all; Answer
// then refuses the request whatever its era.
func (r *Request) Malformed() bool { return r.perr != nil }

// ToolName is params.name when it is a string.
func (r *Request) ToolName() (string, bool) { return r.name, r.nameOK }

// Status classifies an answer for transports that report it out of band
// as well: Streamable HTTP turns it into a status code.
type Status uint8

const (
	// Answered: a result, or an error about what was asked (HTTP 200).
	Answered Status = iota
	// Rejected: a modern request that cannot be served at all, for its
	// protocol version or its _meta (HTTP 400).
	Rejected
	// NoSuchMethod: a modern request for a method the server lacks (HTTP
	// 404, so a client can tell it from a legacy server's 404).
	NoSuchMethod
)

// Answer runs a prepared request, appends its response line (without the
// newline) to dst and returns it with its status.
func (sess *Session) Answer(ctx context.Context, req *Request, dst []byte) ([]byte, Status) {
	m := req.Msg
	start := len(dst)
	out, err := sess.dispatch(ctx, req, jsonrpc.AppendResultStart(dst, m.ID))
	if err != nil {
		return jsonrpc.AppendError(dst[:start], m.ID, err), sess.status(req, err)
	}
	return append(out, '}'), Answered
}

func (sess *Session) status(req *Request, err *jsonrpc.Error) Status {
	if _, modern := req.Modern(); !modern && req.perr == nil {
		return Answered
	}
	switch {
	case err.Code == jsonrpc.CodeUnsupportedProtocolVersion:
		return Rejected
	case err.Code == jsonrpc.CodeMethodNotFound && req.Msg.Method != "tools/call":
		return NoSuchMethod
	case err.Code == jsonrpc.CodeInvalidParams:
		if p, ok := err.Data.(paramsProblem); ok && strings.HasPrefix(p.Path, "_meta") {
			return Rejected
		}
	}
	return Answered
}

func invalidParams(path, reason string) *jsonrpc.Error {
	return paramsError(paramsProblem{Path: path, Reason: reason})
}

// paramsError is the Invalid params error for problem. The message itself
// names the first problem's path and reason, and how many more there are:
// hosts and SDKs show a model only error.message, and "Invalid params"
// alone gives it nothing to correct. data keeps the full list.
func paramsError(problem paramsProblem) *jsonrpc.Error {
	msg := "Invalid params: " + problem.Path + ": " + problem.Reason
	if n := len(problem.Errors) - 1; n > 0 {
		msg += " (and " + strconv.Itoa(n) + " more)"
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg, Data: problem}
}

// dispatch appends the result of m to dst.
func (sess *Session) dispatch(ctx context.Context, req *Request, dst []byte) ([]byte, *jsonrpc.Error) {
	if req.perr != nil {
		return nil, req.perr
	}
	m, p := req.Msg, &req.p
	modern := req.modern
	if modern {
		if !req.versionOK {
			return nil, invalidParams("_meta."+metaProtocolVersion, "must be a string")
		}
		if req.version != ModernVersion {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version",
				Data: versionProblem{Supported: SupportedVersions, Requested: req.version}}
		}
		if p.meta.ClientCapabilities == nil {
			return nil, invalidParams("_meta."+metaClientCapabilities, "required field is missing")
		}
	} else if m.Method != "initialize" && m.Method != "ping" && !sess.initialized.Load() {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeNotInitialized, Message: "Server not initialized: send initialize first, or name the protocol version in params._meta"}
	}

	switch m.Method {
	case "initialize":
		result, err := sess.initialize(p)
		return append(dst, result...), err
	case "ping":
		if modern {
			return append(dst, `{"resultType":"complete"}`...), nil
		}
		return append(dst, `{}`...), nil
	case "server/discover":
		return append(dst, sess.srv.view.Load().discover...), nil
	case "tools/list":
		if p.Cursor != nil && string(p.Cursor) != "null" && string(p.Cursor) != `""` {
			return nil, invalidParams("cursor", "unknown cursor; tools/list has a single page, so send no cursor")
		}
		c, err := sess.caller(ctx, p)
		if err != nil {
			return nil, err
		}
		// Marked before the list is read, so a Refresh that stores a new
		// list after this read sees the mark and tells the session.
		sess.listed.Or(1 << c.Tier)
		list := sess.srv.view.Load().lists[c.Tier]
		if modern {
			scope := `,"cacheScope":"public"}`
			if c.Authenticated() {
				scope = `,"cacheScope":"private"}`
			}
			dst = append(dst, `{"resultType":"complete","tools":`...)
			dst = append(dst, list...)
			dst = append(dst, toolsListTTL...)
			return append(dst, scope...), nil
		}
		dst = append(dst, `{"tools":`...)
		dst = append(dst, list...)
		return append(dst, '}'), nil
	case "tools/call":
		return sess.callTool(ctx, req, modern, dst)
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + jsonrpc.Brief(m.Method)}
}

func (sess *Session) initialize(p *params) ([]byte, *jsonrpc.Error) {
	if p.ProtocolVersion == nil {
		return nil, invalidParams("protocolVersion", "required field is missing")
	}
	// A string, or null (read as "", as a decoder would into a string).
	var requested string
	if string(p.ProtocolVersion) != "null" {
		var ok bool
		if requested, ok = jsonrpc.String(p.ProtocolVersion); !ok {
			return nil, invalidParams("protocolVersion", "must be a string")
		}
	}
	version := LatestLegacy
	if slices.Contains(LegacyVersions, requested) {
		version = requested
	}
	v := sess.srv.view.Load()
	sess.version.Store(&version)
	if c := v.node.Catalog.Version; c != "" {
		sess.catalog.Store(&c)
	} else {
		sess.catalog.Store(nil)
	}
	sess.initialized.Store(true)
	return appendInitializeResult(nil, version, sess.srv.serverInfo, v.instructions, sess.listening.Load()), nil
}
