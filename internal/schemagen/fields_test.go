package schemagen

import "testing"

// identifier names fields and types as go-jsonschema does with our
// capitalizations; TestGoldenCompiles and gen/'s build hold the whole
// model (declaredStructs) to go-jsonschema's output.
func TestIdentifier(t *testing.T) {
	for in, want := range map[string]string{
		"signed_sha256":    "SignedSHA256",
		"sha256":           "SHA256",
		"http_status":      "HttpStatus",
		"proposalVote":     "ProposalVote",
		"id":               "ID",
		"url":              "URL",
		"registry_version": "RegistryVersion",
		"log-head":         "LogHead",
	} {
		if got := identifier(in); got != want {
			t.Errorf("identifier(%q) = %q, want %q", in, got, want)
		}
	}
}
