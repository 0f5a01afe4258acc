package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/three-good-sources/3gs/gen"
	"github.com/three-good-sources/3gs/internal/fetch"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/proposals"
	"github.com/three-good-sources/3gs/internal/textnorm"
)

// proposalsVoteOptions are proposals vote's flags.
type proposalsVoteOptions struct {
	key        keyOptions
	node       string
	nodePubkey string
	own        registryFile // the voter's own registry, whose endorsement names the node's key
	timeout    durationFlag
}

func proposalsVoteFlags(f *Flags) {
	o := options[proposalsVoteOptions](f)
	keyFlag(f, &o.key, "your curator secret key file: the key the node's registry endorses you under")
	f.StringVar(&o.node, "node", "THREEGS_VOTE_NODE", "", "the node whose proposal it is, as http(s)://host[:port] (its MCP endpoint is URL/mcp)")
	o.own.flags(f, "your own registry: its endorsement of the --node URL names the curator key that node must answer with, or nothing is signed")
	f.StringVar(&o.nodePubkey, "node-pubkey", "THREEGS_VOTE_NODE_PUBKEY", "", "the curator key the node must answer with (pk:...), as its curator told you; instead of --registry")
	f.DurationVar(&o.timeout, "timeout", "THREEGS_VOTE_TIMEOUT", "30s", "how long talking to the node may take in all")
}

// runProposalsVote signs a vote (proposals.Statement) for the node's
// curator key, which get_proposal names, and sends it with vote_proposal.
// The node counts it only if its signed registry endorses the key. The
// key must be the one the voter expects (expectedNodeKey), or nothing is
// signed: the statement binds the vote to that key, and a node answering
// with another's would be asking for a vote to replay there.
func runProposalsVote(ctx context.Context, env *Env, f *Flags) int {
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(env.Stderr, "3gs proposals vote: "+format+"\n", args...)
		return code
	}
	args := f.Args()
	if len(args) != 2 || !proposals.ValidID(args[0]) || gen.VoteChoice(args[1]) != gen.VoteChoiceSupport && gen.VoteChoice(args[1]) != gen.VoteChoiceOppose {
		return fail(ExitUsage, "give the proposal id and support or oppose, e.g. 3gs proposals vote p0f3a9c2e41b7d586 support --key-file KEY --node https://their.node")
	}
	id, vote := args[0], gen.VoteChoice(args[1])
	o := options[proposalsVoteOptions](f)
	endpoint, err := mcpEndpoint(o.node)
	if err != nil {
		return fail(ExitUsage, "--node: %v", err)
	}
	want, wantFrom, err := expectedNodeKey(o, f, o.node)
	if err != nil {
		return fail(ExitUsage, "%v", err)
	}
	key, _, err := signingKey(env, o.key, func(msg string) { fmt.Fprintln(env.Stderr, "3gs proposals vote: warning:", msg) })
	if err != nil {
		return fail(ExitUsage, "%v", err)
	}
	if key == nil {
		return fail(ExitUsage, "a vote is signed with your curator key: give --key-file KEY (or %s)", secretKeyEnv)
	}
	timeout, err := o.timeout.get()
	if err != nil {
		return fail(ExitUsage, "%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var got gen.GetProposalOutput
	if text, err := callTool(ctx, endpoint, gen.ToolGetProposal, map[string]any{"id": id}, &got); err != nil {
		return fail(ExitFail, "asking %s for proposal %s: %v%s", endpoint, id, err, text)
	}
	if got.NodePubkey == nil {
		return fail(ExitFail, "%s names no curator key, so it takes no votes", endpoint)
	}
	if *got.NodePubkey != want {
		return fail(ExitFail, "nothing signed: %s answers with curator key %s, but %s says the node there has %s. It may be another node passing on that node's answers to collect a vote it can replay there. Check the --node URL; if that node's curator really changed keys, confirm it with them and update the endorsement (3gs endorse) or --node-pubkey", endpoint, textnorm.Terminal(*got.NodePubkey), wantFrom, want)
	}
	at := time.Now().UTC().Truncate(time.Second)
	voter, sig := proposals.SignVote(key, *got.NodePubkey, id, vote, at)
	in := map[string]any{"id": id, "vote": vote, "voter": voter, "time": at.Format(time.RFC3339), "signature": sig}
	var out gen.VoteProposalOutput
	text, err := callTool(ctx, endpoint, gen.ToolVoteProposal, in, &out)
	if err != nil {
		return fail(ExitFail, "%v%s", err, text)
	}
	fmt.Fprintln(env.Stdout, text)
	return ExitOK
}

// mcpEndpoint is the MCP endpoint of a node given as its base URL.
func mcpEndpoint(node string) (string, error) {
	if node == "" {
		return "", fmt.Errorf("name the node, e.g. --node https://their.node")
	}
	u, err := url.Parse(node)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("%q is not an http(s) URL", node)
	}
	// The same rule as serve --follow: a name only a local network
	// resolves is refused; its address may be written as a literal IP.
	if err := fetch.CheckOperatorURL(node); err != nil {
		return "", err
	}
	if !strings.HasSuffix(u.Path, "/mcp") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/mcp"
	}
	return u.String(), nil
}

// maxAnswer bounds a node's answer.
const maxAnswer = 1 << 20

// nodeResolver resolves the names of the nodes callTool calls; nil is the
// system's. Tests set one, to show a name is judged by the address it
// resolves to.
var nodeResolver *net.Resolver

// nodeClient is the guarded client (internal/fetch) callTool calls a node
// with.
func nodeClient() *fetch.Client {
	return fetch.New(fetch.Options{Resolver: nodeResolver, UserAgent: "3gs/" + buildVersion()})
}

// callTool calls one tool at endpoint in the session-less protocol
// version and decodes its structured result into out. A tool error comes
// back as an error, with the tool's text as the string. The node wrote
// that text and any error message, so both come back escaped for the
// terminal (textnorm.Terminal).
func callTool(ctx context.Context, endpoint, tool string, args map[string]any, out any) (string, error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": tool, "arguments": args,
		"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": mcp.ModernVersion, "io.modelcontextprotocol/clientCapabilities": map[string]any{}},
	}})
	h := http.Header{}
	h.Set("Mcp-Protocol-Version", mcp.ModernVersion)
	h.Set("Mcp-Method", "tools/call")
	h.Set("Mcp-Name", tool)
	// Through the one guarded client: the node is the operator's (--node,
	// checked by fetch.CheckOperatorURL), so it may be a literal private
	// address, but a name that resolves to one is refused when dialling,
	// no redirect is followed, and the answer is read within maxAnswer.
	resp, err := nodeClient().Get(ctx, fetch.Request{URL: endpoint, Method: http.MethodPost, Body: body, ContentType: "application/json",
		Accept: "application/json, text/event-stream", Header: h, What: "the node's MCP endpoint", Limit: maxAnswer, Operator: true})
	if err != nil {
		return "", err
	}
	defer resp.Release()
	data := resp.Body
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data = lastEvent(data)
	}
	var msg struct {
		Result *struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			Structured json.RawMessage `json:"structuredContent"`
			IsError    bool            `json:"isError"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &msg); err != nil {
		return "", fmt.Errorf("the node answered HTTP %d with no MCP answer", resp.Status)
	}
	switch {
	case msg.Error != nil:
		return "", fmt.Errorf("the node refused the call: %s", textnorm.Terminal(oneLine(msg.Error.Message)))
	case msg.Result == nil:
		return "", fmt.Errorf("the node answered HTTP %d with no result", resp.Status)
	}
	var text strings.Builder
	for _, c := range msg.Result.Content {
		text.WriteString(c.Text)
	}
	if msg.Result.IsError {
		return "\n" + textnorm.TerminalLines(text.String()), fmt.Errorf("%s failed", tool)
	}
	if err := json.Unmarshal(msg.Result.Structured, out); err != nil {
		return "", fmt.Errorf("the node's %s result: %v", tool, err)
	}
	return textnorm.TerminalLines(text.String()), nil
}

// lastEvent is the data of the last event of a text/event-stream body.
func lastEvent(body []byte) []byte {
	var last []byte
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, maxAnswer)
	for sc.Scan() {
		if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok {
			last = bytes.TrimSpace(append([]byte(nil), d...))
		}
	}
	return last
}
