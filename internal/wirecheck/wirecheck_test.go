package wirecheck

import (
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		line       string
		kind       Kind
		id, cancel string
	}{
		{`{"jsonrpc":"2.0","id":1e2,"method":"ping"}`, CleanRequest, "1e2", ""},
		{`{"jsonrpc":"2.0","id":"a","method":"x","params":null}`, CleanRequest, `"a"`, ""},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`, CleanNotification, "", `"a"`},
		{`{"jsonrpc":"2.0","id":3,"result":{}}`, CleanResponse, "3", ""},
		{`{"jsonrpc":"2.0","id":3,"id":4,"method":"ping"}`, Unclean, "4", ""},
		{`{"jsonrpc":"2.0","id":5,"method":"ping","params":[]}`, Unclean, "5", ""},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, Unclean, "", ""},
		{`{"jsonrpc":"2.0","id":6,"method":""}`, Unclean, "6", ""},
		{`{"jsonrpc":"1.0","id":7,"method":"ping"}`, Unclean, "7", ""},
		{`{"jsonrpc":"2.0","id":8,"method":"ping","params":{"x":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}}`, Unclean, "8", ""},
		{`{"jsonrpc":"2.0","id":8,"method":"ping","params":{"x":` + strings.Repeat("[", 62) + strings.Repeat("]", 62) + `}}`, CleanRequest, "8", ""},
		{`[1]`, Unclean, "", ""},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\x00\"}", Unclean, "", ""},
	} {
		kind, id, cancel := Classify([]byte(c.line))
		if kind != c.kind || id != c.id || cancel != c.cancel {
			t.Errorf("%.60s: %d %q %q, want %d %q %q", c.line, kind, id, cancel, c.kind, c.id, c.cancel)
		}
	}
}

func TestCheckResponse(t *testing.T) {
	for line, ok := range map[string]bool{
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                                  true,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse"}}`: true,
		`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`: false,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1}}`:                           false,
		`{"jsonrpc":"2.0","result":{}}`:                                         false,
		`{"jsonrpc":"2.0","id":"\0","result":{}}`:                               false,
		`{"jsonrpc":"2.0","id":1,"result":{}} {}`:                               false,
	} {
		if _, err := CheckResponse([]byte(line)); (err == nil) != ok {
			t.Errorf("%s: %v", line, err)
		}
	}
}
