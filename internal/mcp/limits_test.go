package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/mcp"
)

// paramsError reports the path and reason of a -32602 answer, or "" when
// the answer is something else.
func paramsError(errObj map[string]any) (path, reason string) {
	if errObj == nil || errObj["code"] != float64(-32602) {
		return "", ""
	}
	data, _ := errObj["data"].(map[string]any)
	path, _ = data["path"].(string)
	reason, _ = data["reason"].(string)
	return path, reason
}

// The query bound is the schema's maxLength of 500, counted in characters:
// 500 four-byte characters pass, 501 ASCII ones do not.
func TestQueryLengthBoundary(t *testing.T) {
	sess := newTierServer(t).srv.NewSession()
	initialize(t, sess)
	for _, c := range []struct {
		query string
		ok    bool
	}{
		{strings.Repeat("a", 500), true},
		{strings.Repeat("𠀀", 500), true},
		{strings.Repeat("a", 501), false},
		{strings.Repeat("𠀀", 501), false},
	} {
		args, _ := json.Marshal(map[string]string{"query": c.query})
		res, errObj := call(t, sess, context.Background(), "tools/call", `"name":"get_sources","arguments":`+string(args))
		path, reason := paramsError(errObj)
		if c.ok && res == nil {
			t.Errorf("a query of %d characters was refused: %v", len([]rune(c.query)), errObj)
		}
		if !c.ok && (path != "arguments.query" || !strings.Contains(reason, "500")) {
			t.Errorf("a query of %d characters: %v %v, want -32602 at arguments.query", len([]rune(c.query)), res, errObj)
		}
	}
}

// maximalUpsert is an upsert_category argument object with every string at
// its schema maximum, written with ch (one character, of any byte length).
func maximalUpsert(ch string) []byte {
	s := func(n int) string { return strings.Repeat(ch, n) }
	patterns := make([]string, 64)
	for i := range patterns {
		patterns[i] = s(500)
	}
	source := func(rank int) map[string]any {
		return map[string]any{"rank": rank, "name": s(200), "url": fmt.Sprintf("https://example.org/%d/", rank) + strings.Repeat("p", 2048-len("https://example.org/1/")), "type": "book", "why": s(2000)}
	}
	b, _ := json.Marshal(map[string]any{"slug": strings.Repeat("a", 64), "category": map[string]any{
		"name": s(200), "description": s(2000), "query_patterns": patterns,
		"sources": []any{source(1), source(2), source(3)},
	}})
	return b
}

// TestArgumentLimit: arguments longer than MaxArgumentBytes are refused
// before decoding, at the byte boundary, while the largest upserts the
// schema allows still get through to the tool.
func TestArgumentLimit(t *testing.T) {
	ts := newTierServer(t)
	sess := ts.srv.NewSessionWithToken(ts.admin)
	initialize(t, sess)
	for _, ch := range []string{"a", "𠀀"} {
		args := maximalUpsert(ch)
		res, errObj := call(t, sess, context.Background(), "tools/call", `"name":"upsert_category","arguments":`+string(args))
		// The tool itself answers (with an error result: this registry is
		// signed and the server has no key), so the call got past the limit
		// and the decoder.
		if res == nil || errObj != nil {
			t.Errorf("a maximal upsert of %d bytes was refused: %v", len(args), errObj)
		}
	}

	// get_sources ignores no member: padding goes in a string whose length
	// sets the total, so the limit is hit exactly.
	pad := func(total int) string {
		head, tail := `{"query":"rust","x":"`, `"}`
		return head + strings.Repeat("z", total-len(head)-len(tail)) + tail
	}
	for _, c := range []struct {
		size int
		want string
	}{
		{mcp.MaxArgumentBytes, "arguments.x"}, // read, then refused as an unknown key
		{mcp.MaxArgumentBytes + 1, "arguments"},
	} {
		_, errObj := call(t, sess, context.Background(), "tools/call", `"name":"get_sources","arguments":`+pad(c.size))
		path, reason := paramsError(errObj)
		if path != c.want {
			t.Errorf("arguments of %d bytes: %s %q, want the problem at %s", c.size, path, reason, c.want)
		}
		if c.want == "arguments" && !strings.Contains(reason, "262144 bytes") {
			t.Errorf("the refusal does not state the limit: %q", reason)
		}
	}
}

// Repeated members of params or _meta are refused with their path: the
// copy a proxy reads may not be the one the server would.
func TestDuplicateParams(t *testing.T) {
	ts := newTierServer(t)
	sess := ts.srv.NewSession()
	initialize(t, sess)
	for params, want := range map[string]string{
		`"name":"get_sources","name":"upsert_category","arguments":{"query":"rust"}`:                        "name",
		`"name":"get_sources","arguments":{"query":"rust"},"arguments":{"query":"go"}`:                      "arguments",
		`"n\u0061me":"get_sources","name":"get_sources","arguments":{"query":"rust"}`:                       "name",
		`"name":"get_sources","arguments":{"query":"rust"},"_meta":{"io.3gs/token":"a","io.3gs/token":"b"}`: "_meta.io.3gs/token",
		`"name":"get_sources","arguments":{"query":"rust","query":"go"}`:                                    "arguments.query",
	} {
		res, errObj := call(t, sess, context.Background(), "tools/call", params)
		if path, reason := paramsError(errObj); path != want || reason != "duplicate key" {
			t.Errorf("%s: %v %v, want duplicate key at %s", params, res, errObj, want)
		}
	}
	// Unknown keys in other cases are still only unknown keys.
	res, errObj := call(t, sess, context.Background(), "tools/call", `"name":"get_sources","Nom":"upsert_category","arguments":{"query":"rust"}`)
	if res == nil || res["isError"] != false {
		t.Errorf("an unknown member changed the call: %v %v", res, errObj)
	}
}

func initialize(t *testing.T, sess *mcp.Session) {
	t.Helper()
	if _, errObj := call(t, sess, context.Background(), "initialize", `"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}`); errObj != nil {
		t.Fatal(errObj)
	}
}

// A params key that differs from one the server reads only by case is
// refused with its path, never silently ignored: a lenient reader in front
// of us (a proxy, a log) would take "Name" for "name".
func TestParamsCaseVariantsRefused(t *testing.T) {
	sess := newTierServer(t).srv.NewSession()
	initialize(t, sess)
	for params, key := range map[string]string{
		`"name":"get_sources","Name":"list_categories","arguments":{"query":"rust"}`:     "Name",
		`"NAME":"list_categories","name":"get_sources","arguments":{"query":"rust"}`:     "NAME",
		`"name":"get_sources","Arguments":{},"arguments":{"query":"rust"}`:               "Arguments",
		`"name":"get_sources","arguments":{"query":"rust"},"_meta":{"io.3gs/Token":"x"}`: "_meta.io.3gs/Token",
	} {
		res, errObj := call(t, sess, context.Background(), "tools/call", params)
		path, reason := paramsError(errObj)
		if res != nil || path != key || !strings.Contains(reason, "only by case") {
			t.Errorf("{%s}: %v %v, want -32602 at %s", params, res, errObj, key)
		}
		if msg, _ := errObj["message"].(string); !strings.Contains(msg, key) {
			t.Errorf("{%s}: message %q does not name %s", params, msg, key)
		}
	}
}
