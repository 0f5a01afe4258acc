package testkit

import (
	"bytes"
	"encoding/json"
)

// WithCurator returns the registry document doc with its curator.pubkey
// replaced by pubkey (pk:Z32, or the placeholder), the rest byte for byte
// as it was: how tests re-key the shipped or a frozen registry to a key
// of their own before signing it.
func WithCurator(doc []byte, pubkey string) []byte {
	var cur struct{ Curator struct{ Pubkey string } }
	if err := json.Unmarshal(doc, &cur); err != nil || cur.Curator.Pubkey == "" {
		panic("testkit.WithCurator: the document names no curator.pubkey")
	}
	return bytes.Replace(doc, []byte(`"`+cur.Curator.Pubkey+`"`), []byte(`"`+pubkey+`"`), 1)
}
