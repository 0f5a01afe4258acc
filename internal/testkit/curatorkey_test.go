package testkit

import (
	"encoding/json"
	"testing"
)

// The curator's key changes and nothing else does.
func TestWithCurator(t *testing.T) {
	doc := []byte(`{"version": "1.0.0", "curator": {"name": "c", "pubkey": "pk:old"}, "note": "pk:old"}`)
	got := WithCurator(doc, "pk:new")
	var d struct {
		Curator struct{ Pubkey string }
		Note    string
	}
	if err := json.Unmarshal(got, &d); err != nil || d.Curator.Pubkey != "pk:new" || d.Note != "pk:old" {
		t.Errorf("got %s", got)
	}
}
