package mcp

import (
	"testing"

	"github.com/bytedance/sonic"

	"github.com/three-good-sources/3gs/gen"
)

// TestHandWrittenResults holds the results written by hand to what sonic
// writes for the structs that describe them.
func TestHandWrittenResults(t *testing.T) {
	for _, version := range []string{"", "1.2.3", "v\"quoted\"\n", "日本"} {
		impl := implementation{Name: ServerName, Version: version, ContractVersion: gen.ContractVersion}
		info := appendImplementation(nil, impl)
		if want := mustJSON(impl); string(info) != string(want) {
			t.Errorf("serverInfo:\n%s\nsonic:\n%s", info, want)
		}
		disc := appendDiscover(nil, info, Instructions)
		want := mustJSON(discoverResult{
			ResultType:        "complete",
			SupportedVersions: SupportedVersions,
			Capabilities:      serverCapabilities,
			Instructions:      Instructions,
			Meta:              discoverMeta{ServerInfo: impl},
			TTLMs:             toolsListTTLMs,
			CacheScope:        "public",
		})
		if string(disc) != string(want) {
			t.Errorf("server/discover:\n%s\nsonic:\n%s", disc, want)
		}
		for _, pv := range LegacyVersions {
			for listening, caps := range map[bool]capabilities{false: serverCapabilities, true: listeningCapabilities} {
				got := appendInitializeResult(nil, pv, info, Instructions, listening)
				want := mustJSON(initializeResult{ProtocolVersion: pv, Capabilities: caps, ServerInfo: sonic.NoCopyRawMessage(info), Instructions: Instructions})
				if string(got) != string(want) {
					t.Errorf("initialize (listening %v):\n%s\nsonic:\n%s", listening, got, want)
				}
			}
		}
	}
}

func mustJSON(v any) []byte {
	b, err := sonic.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
