package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/auth"
	"github.com/three-good-sources/3gs/internal/jsonrpc"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/tools"
)

// The local admin channel: a command cannot write a registry while a
// server holds its lock, so it asks that server, over a Unix socket beside
// the registry (R.sock, mode 0600, made in a private directory and moved
// there; each peer's credentials checked: only the server's own user
// reaches it, the user who could read its key and its files anyway).
// One request line per connection, one answer line:
//
//   - "sign": 3gs sign, the curator's hand edit recorded, signed and
//     served (tools.Handlers.SignHandEdit); answered "OK text" or
//     "FAIL text".
//   - a JSON-RPC 2.0 tools/call request, answered as an MCP server
//     answers it: the curator commands (3gs proposals accept|reject,
//     3gs endorse, 3gs category add|edit|remove) call the server's own
//     tools through an MCP session of its (the tools/call an admin token
//     reaches over stdio or HTTP), as an admin caller named LocalActor(),
//     so a change made here is the change the tool makes, with the same
//     audit log entry.
func LocalSocket(regPath string) string { return regPath + ".sock" }

// maxSocketPath is the longest socket path every Unix takes (sun_path).
const maxSocketPath = 100

// maxRequestLine bounds a request line: the largest tool arguments a
// server takes over MCP, and room for the envelope.
const maxRequestLine = mcp.MaxArgumentBytes + 4096

// LocalActor is who a curator's command acts as, in the audit log and in
// a proposal's decision, whether it writes the files itself or asks the
// server holding them: cli:USER, the name of the user running it (the
// server's own user, on the local channel), so it never reads as an admin
// token's name (those take no colon). USER is cut to what an actor may
// hold, and characters a token name may not take are left out.
func LocalActor() string {
	name := ""
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	if name == "" {
		name = os.Getenv("USER")
	}
	var b strings.Builder
	for _, r := range name {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._@-", r)) {
			b.WriteRune(r)
		}
	}
	name = b.String()
	if name == "" {
		name = fmt.Sprint("uid", os.Getuid())
	}
	// proposals.Actor prefixes 39 characters to it within the 64 an
	// actor may take.
	return "cli:" + name[:min(len(name), 21)]
}

// serveLocalChannel answers requests until ctx ends, then removes the
// socket. A path too long for a socket, or one that is taken by anything
// but a stale socket, leaves the channel closed, with a warning: the
// commands then say to stop the server.
func serveLocalChannel(ctx context.Context, h *tools.Handlers, srv *mcp.Server, regPath string, signs bool, log *slog.Logger) {
	path := LocalSocket(regPath)
	if len(path) > maxSocketPath {
		log.Warn("no local admin channel: the registry's path is too long for a Unix socket beside it; 3gs sign, proposals, endorse and category need this server stopped", "socket", path)
		return
	}
	// This server holds the registry's lock, so a socket left there is a
	// crashed server's; anything else is not ours to remove.
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket || !ownedByUs(fi) {
			log.Warn("no local admin channel: something that is not this user's socket is in its place; 3gs sign, proposals, endorse and category need this server stopped", "socket", path)
			return
		}
		if err := os.Remove(path); err != nil {
			log.Warn("no local admin channel: cannot remove a socket left by an earlier server", "socket", path, "err", err)
			return
		}
	}
	// The socket is made in a directory only this user can enter, made
	// private there, and only then moved beside the registry: no one else
	// can connect in the moment between its creation and its chmod.
	dir, err := os.MkdirTemp(filepath.Dir(path), ".3gs-sign-")
	if err != nil {
		log.Warn("no local admin channel; the curator's commands need this server stopped", "socket", path, "err", err)
		return
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "s")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		log.Warn("no local admin channel; the curator's commands need this server stopped", "socket", path, "err", err)
		return
	}
	l.SetUnlinkOnClose(false)
	defer l.Close()
	if err := os.Chmod(tmp, 0o600); err != nil {
		log.Warn("no local admin channel: cannot make its socket private", "socket", path, "err", err)
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		log.Warn("no local admin channel; the curator's commands need this server stopped", "socket", path, "err", err)
		return
	}
	defer os.Remove(path)
	go func() { <-ctx.Done(); l.Close() }()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// A passing failure (too many open files) must not end the
			// channel for good.
			log.Warn("the local admin channel could not accept a connection; it keeps listening", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		answerLocal(ctx, h, srv, c, signs, log)
	}
}

// answerLocal serves one connection: one request, one answer, within
// localTimeout.
func answerLocal(ctx context.Context, h *tools.Handlers, srv *mcp.Server, c net.Conn, signs bool, log *slog.Logger) {
	defer c.Close()
	if !peerIsUs(c) {
		fmt.Fprintln(c, "FAIL only the user this server runs as may use its local channel")
		return
	}
	// The request line comes at once or not at all: a client that sends
	// nothing holds the channel, and the server's shutdown, for moments.
	c.SetDeadline(time.Now().Add(requestTimeout))
	line, err := bufio.NewReaderSize(&limitedConn{c, maxRequestLine}, 64<<10).ReadBytes('\n')
	c.SetDeadline(time.Now().Add(localTimeout))
	if err != nil {
		fmt.Fprintln(c, "FAIL not a request: "+oneLineError(err))
		return
	}
	line = bytes.TrimSpace(line)
	if len(line) > 0 && line[0] == '{' {
		ans := callLocal(ctx, srv, line, log)
		data, err := json.Marshal(ans)
		if err != nil {
			data = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}`)
		}
		c.Write(append(data, '\n'))
		return
	}
	if string(line) != "sign" {
		fmt.Fprintln(c, "FAIL not a request: send sign, or one JSON-RPC tools/call")
		return
	}
	if !signs {
		fmt.Fprintln(c, "FAIL this server holds no curator key, so it cannot sign the edit; stop it, run 3gs sign --key-file KEY, and start it again (with --key-file, so it signs the next edit itself)")
		return
	}
	out, err := h.SignHandEdit(ctx)
	if err != nil {
		fmt.Fprintln(c, "FAIL "+oneLineError(err))
		return
	}
	log.Info("signed and serving the curator's edit, as 3gs sign asked", "version", out.RegistryVersion, "sha256", out.RegistrySHA256)
	fmt.Fprintln(c, "OK "+oneLine(h.ReloadRegistryText(out)))
}

// localTimeout bounds one request, both ways; requestTimeout the wait
// for its request line.
const (
	localTimeout   = 30 * time.Second
	requestTimeout = 5 * time.Second
)

// limitedConn reads at most n bytes of a connection.
type limitedConn struct {
	c net.Conn
	n int
}

func (l *limitedConn) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("request too long")
	}
	p = p[:min(len(p), l.n)]
	n, err := l.c.Read(p)
	l.n -= n
	return n, err
}

// localRequest is a JSON-RPC tools/call request on the local channel.
type localRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"params"`
}

// localResponse is its answer: a tool's result, as an MCP server writes
// it, or a JSON-RPC error.
type localResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  *ToolResult     `json:"result,omitempty"`
	Error   *CallError      `json:"error,omitempty"`
}

// ToolResult is a tool's answer on the local channel: its text, its
// structured content, and whether it reports a failure (isError).
type ToolResult struct {
	Content           []TextBlock     `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

// TextBlock is one text content block.
type TextBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Text is the result's text.
func (r *ToolResult) Text() string {
	var parts []string
	for _, b := range r.Content {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}

// CallError is a call refused before or while the tool ran: arguments
// the tool's schema refuses (Problems, each with its path), a tool this
// channel does not call, or a failure of the server.
type CallError struct {
	Code     int       `json:"code"`
	Message  string    `json:"message"`
	Problems []Problem `json:"data,omitempty"`
}

// Problem is one argument problem: where (the path inside the arguments)
// and why.
type Problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

func (p Problem) Error() string {
	if p.Path == "" {
		return p.Reason
	}
	return p.Path + ": " + p.Reason
}

func (e *CallError) Error() string {
	if len(e.Problems) == 0 {
		return e.Message
	}
	var lines []string
	for _, p := range e.Problems {
		lines = append(lines, p.Error())
	}
	return e.Message + ": " + strings.Join(lines, "; ")
}

// callLocal runs one tools/call request at the admin tier, as LocalActor,
// through an MCP session of srv's (mcp.Server.NewSessionAs): the same
// dispatch, argument checks and results as a tools/call over stdio or
// HTTP. Its answer is put in the channel's own shape: an argument
// problem's path is the one inside the arguments, as the curator
// commands name them.
func callLocal(ctx context.Context, srv *mcp.Server, line []byte, log *slog.Logger) *localResponse {
	ans := &localResponse{JSONRPC: "2.0", ID: json.RawMessage("null")}
	m, _, perr := jsonrpc.Parse(line)
	if perr != nil {
		ans.Error = &CallError{Code: perr.Code, Message: "not a JSON-RPC request: " + perr.Message}
		return ans
	}
	if m.ID != nil {
		ans.ID = json.RawMessage(m.ID)
	}
	if m.Kind != jsonrpc.KindRequest || m.Method != "tools/call" {
		ans.Error = &CallError{Code: jsonrpc.CodeMethodNotFound, Message: "the local channel answers tools/call (JSON-RPC 2.0) only"}
		return ans
	}
	actor := LocalActor()
	req := mcp.Prepare(m)
	resp, _ := srv.NewSessionAs(auth.Caller{Tier: gen.TierAdmin, Name: actor, Presented: true}).Answer(ctx, &req, nil)
	var out struct {
		Result *ToolResult `json:"result"`
		Error  *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp, &out); err != nil || (out.Result == nil) == (out.Error == nil) {
		log.Error("the local channel could not read the MCP answer", "answer", string(resp), "err", err)
		ans.Error = &CallError{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
		return ans
	}
	name, _ := req.ToolName()
	if out.Result != nil {
		ans.Result = out.Result
		if !out.Result.IsError {
			log.Info("a local command called a tool", "tool", name, "actor", actor)
		}
		return ans
	}
	e := out.Error
	ans.Error = &CallError{Code: e.Code, Message: e.Message}
	if e.Code == jsonrpc.CodeInvalidParams {
		if problems := argumentProblems(e.Data); len(problems) > 0 {
			ans.Error.Message, ans.Error.Problems = "Invalid params", problems
		}
	}
	return ans
}

// argumentProblems are the problems an MCP Invalid params error's data
// names ({path, reason, errors}), with the paths inside the arguments:
// "arguments.slug" is "slug", and "arguments" itself "".
func argumentProblems(data json.RawMessage) []Problem {
	type problem struct {
		Path   string    `json:"path"`
		Reason string    `json:"reason"`
		Errors []problem `json:"errors"`
	}
	var p problem
	if json.Unmarshal(data, &p) != nil || p.Path == "" {
		return nil
	}
	all := p.Errors
	if len(all) == 0 {
		all = []problem{p}
	}
	var out []Problem
	for _, q := range all {
		path := q.Path
		if path == "arguments" {
			path = ""
		} else if rest, ok := strings.CutPrefix(path, "arguments."); ok {
			path = rest
		}
		out = append(out, Problem{Path: path, Reason: q.Reason})
	}
	return out
}

// ourSocket reports whether a socket of this user's is at the registry
// regPath's channel: only a server of this user's may be asked; another
// user's socket there could answer OK with nothing done.
func ourSocket(regPath string) bool {
	fi, err := os.Lstat(LocalSocket(regPath))
	return err == nil && fi.Mode().Type() == fs.ModeSocket && ownedByUs(fi)
}

// dialLocal connects to the channel of the server holding regPath; nil
// when none answers.
func dialLocal(regPath string) net.Conn {
	if !ourSocket(regPath) {
		return nil
	}
	c, err := net.DialTimeout("unix", LocalSocket(regPath), 5*time.Second)
	if err != nil {
		return nil
	}
	c.SetDeadline(time.Now().Add(localTimeout))
	return c
}

// AskToSign is sign's side: it reports whether a server answered,
// and what.
func AskToSign(regPath string) (answered, ok bool, text string) {
	c := dialLocal(regPath)
	if c == nil {
		return false, false, ""
	}
	defer c.Close()
	if _, err := fmt.Fprintln(c, "sign"); err != nil {
		return false, false, ""
	}
	line, err := bufio.NewReader(&limitedConn{c, 1 << 16}).ReadString('\n')
	if err != nil && line == "" {
		return true, false, "the server did not answer: " + err.Error()
	}
	status, text, _ := strings.Cut(strings.TrimSpace(line), " ")
	return true, status == "OK", text
}

// ErrNoServer is a call no server answered: none holds the channel.
var ErrNoServer = errors.New("no 3gs server answers on the registry's local channel")

// CallTool calls the tool name with args (marshalled to a JSON object)
// on the server holding the registry regPath, over its local channel,
// and returns the tool's result (a failure the tool reports has IsError
// set). ErrNoServer: nothing answers there; a *CallError: the server
// refused the call; any other error: the exchange failed.
func CallTool(regPath, name string, args any) (*ToolResult, error) {
	c := dialLocal(regPath)
	if c == nil {
		return nil, ErrNoServer
	}
	defer c.Close()
	a, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	req := localRequest{JSONRPC: "2.0", ID: json.RawMessage("1"), Method: "tools/call"}
	req.Params.Name, req.Params.Arguments = name, a
	data, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write(append(data, '\n')); err != nil {
		return nil, fmt.Errorf("the server did not take the request: %w", err)
	}
	line, err := bufio.NewReaderSize(&limitedConn{c, 16 << 20}, 64<<10).ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return nil, fmt.Errorf("the server did not answer: %w", err)
	}
	if bytes.HasPrefix(line, []byte("FAIL ")) {
		return nil, &CallError{Code: jsonrpc.CodeInternalError, Message: strings.TrimSpace(string(line[5:]))}
	}
	var ans localResponse
	if err := json.Unmarshal(line, &ans); err != nil {
		return nil, fmt.Errorf("the server's answer is not JSON-RPC: %w", err)
	}
	if ans.Error != nil {
		return nil, ans.Error
	}
	if ans.Result == nil {
		return nil, errors.New("the server's answer holds no result")
	}
	return ans.Result, nil
}
