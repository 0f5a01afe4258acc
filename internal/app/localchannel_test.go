package app

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/curatorkey"
	"github.com/three-good-sources/3gs/internal/jsonrpc"
	"github.com/three-good-sources/3gs/internal/mcp"
)

// The local channel's tools/call is an MCP session's, run as the
// server's own user at the admin tier: an admin tool runs, a tool
// unknown or a method other than tools/call is -32601, arguments the
// schema refuses are -32602 with their paths inside the arguments (and
// arguments longer than any transport takes, as every transport refuses
// them), a failure the tool reports is isError, and a token the request
// carries changes nothing.
func TestLocalChannelCallsThroughAnMCPSession(t *testing.T) {
	srv, _ := startCatalog(t, 40, 150)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	call := func(line string) *localResponse {
		t.Helper()
		return callLocal(context.Background(), srv.MCP, []byte(line), log)
	}
	tool := func(name, args string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `,"_meta":{"io.3gs/token":"not a token"}}}`
	}
	if a := call(tool("explain_match", `{"query":"replication"}`)); a.Error != nil || a.Result == nil || a.Result.IsError || string(a.ID) != "7" || !strings.Contains(a.Result.Text(), "replication") {
		t.Errorf("explain_match as the local admin: %+v %+v", a.Error, a.Result)
	}
	for _, line := range []string{tool("no_such_tool", `{}`), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"get_sources"}}`} {
		if a := call(line); a.Error == nil || a.Error.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("%s: %+v", line, a.Error)
		}
	}
	if a := call(`{"jsonrpc":"2.0",`); a.Error == nil || a.Error.Code != jsonrpc.CodeParseError {
		t.Errorf("a broken line: %+v", a.Error)
	}
	big, _ := json.Marshal(strings.Repeat("x", mcp.MaxArgumentBytes))
	for _, c := range []struct{ args, path string }{
		{`{"slug":"Not A Slug"}`, "slug"},
		{`{"slug":"a","extra":1}`, "extra"},
		{`{"slug":` + string(big) + `}`, ""},
	} {
		a := call(tool("remove_category", c.args))
		if a.Error == nil || a.Error.Code != jsonrpc.CodeInvalidParams || a.Error.Message != "Invalid params" || len(a.Error.Problems) == 0 || a.Error.Problems[0].Path != c.path {
			t.Errorf("remove_category %.60s: %+v, want a problem at %q", c.args, a.Error, c.path)
		}
	}
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := call(tool("endorse_curator", `{"pubkey":"`+curatorkey.URI(pub)+`","remove":true}`)); a.Error != nil || a.Result == nil || !a.Result.IsError || !strings.Contains(a.Result.Text(), "does not endorse") {
		t.Errorf("removing an endorsement that is not there: %+v %+v", a.Error, a.Result)
	}
}
