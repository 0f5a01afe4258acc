package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/three-good-sources/3gs/internal/testserver"

	"github.com/three-good-sources/3gs/internal/evalset"
	"github.com/three-good-sources/3gs/internal/jsonrpc"
	"github.com/three-good-sources/3gs/internal/mcp"
	"github.com/three-good-sources/3gs/internal/testkit"
)

var benchQueries = []string{
	"how do I run a bitcoin full node", "self host my email server", "learn rust ownership",
	"best password manager", "harden ssh on linux", "threat modeling with stride",
	"home assistant without cloud", "build an mcp server in go",
}

// benchSession serves the shared fixture registry (10 categories), as the
// stdio load benchmark does.
func benchSession(b *testing.B) *mcp.Session {
	data, err := os.ReadFile(testkit.SharedRegistry(b))
	if err != nil {
		b.Fatal(err)
	}
	return sessionOn(b, data)
}

// sessionOn is an initialized session serving the registry document data.
func sessionOn(b *testing.B, data []byte) *mcp.Session {
	return sessionWith(b, testserver.Options{Registry: data})
}

// sessionWith is an initialized session of a server built for opt.
func sessionWith(b *testing.B, opt testserver.Options) *mcp.Session {
	srv := testserver.New(b, opt)
	sess := srv.NewSession()
	m, _, _ := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`))
	sess.Handle(context.Background(), m, nil)
	return sess
}

// BenchmarkHandle measures parse + handle of one request, without
// transport. mix-v1 is get_sources over the benchmark mix (evalset.MixV1)
// on its registry: the figure the request path's devices (pools, unsafe
// conversions) are kept or dropped on; mix-v1-sure and mix-v1-unsure are
// its questions answered confidently and the others (the listing) apart.
func BenchmarkHandle(b *testing.B) {
	sess := benchSession(b)
	mix := evalset.MixV1("../..")
	mixData, err := os.ReadFile(mix.Registry)
	if err != nil {
		b.Fatal(err)
	}
	questions, err := mix.Questions()
	if err != nil {
		b.Fatal(err)
	}
	var mixLines [][]byte
	for i, q := range questions {
		arg, _ := json.Marshal(q)
		mixLines = append(mixLines, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":%s}}}`, i, arg))
	}
	mixSess := sessionOn(b, mixData)
	// The mix's questions apart by their answer: sure (confident) and
	// unsure (not confident or no match, a tool error: the listing).
	var sureLines, unsureLines [][]byte
	for _, l := range mixLines {
		m, _, err := jsonrpc.Parse(l)
		if err != nil {
			b.Fatal(err)
		}
		if bytes.Contains(mixSess.Handle(context.Background(), m, nil), []byte(`"isError":true`)) {
			unsureLines = append(unsureLines, l)
		} else {
			sureLines = append(sureLines, l)
		}
	}
	var lines [][]byte
	for i, q := range benchQueries {
		lines = append(lines, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_sources","arguments":{"query":%q}}}`, i, q))
	}
	cases := map[string][][]byte{
		"tools/list":  {[]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)},
		"get_sources": lines,
		// By slug: no matching, so what remains is the protocol around it.
		"get_sources_slug": {[]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_sources","arguments":{"slug":"rust-learning"}}}`)},
		"mix-v1":           mixLines,
		"mix-v1-sure":      sureLines,
		"mix-v1-unsure":    unsureLines,
		// A session given the catalog in its instructions, as serve's
		// sessions of the mix's registry are (--catalog-max): its
		// not-confident answers point there instead of listing.
		"mix-v1-catalogued":        mixLines,
		"mix-v1-catalogued-unsure": unsureLines,
	}
	catalogued := sessionWith(b, testserver.Options{Registry: mixData, Catalog: true})
	if m, _, err := jsonrpc.Parse(unsureLines[0]); err != nil || !bytes.Contains(catalogued.Handle(context.Background(), m, nil), []byte(`"catalog_version"`)) {
		b.Fatal("a catalogued session's not-confident answer does not point at the catalog", err)
	}
	for name, in := range cases {
		sess := sess
		switch {
		case strings.HasPrefix(name, "mix-v1-catalogued"):
			sess = catalogued
		case strings.HasPrefix(name, "mix-v1"):
			sess = mixSess
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 16<<10) // the transport reuses buffers too
			i := 0
			for b.Loop() {
				m, _, err := jsonrpc.Parse(in[i%len(in)])
				if err != nil {
					b.Fatal(err)
				}
				if out := sess.Handle(context.Background(), m, buf[:0]); len(out) == 0 {
					b.Fatal("no answer")
				}
				i++
			}
		})
	}
}
