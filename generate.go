// Package threegs is the root of 3gs: it embeds the default registry, and
// its go:generate line turns the JSON Schemas under schema/ into gen/.
//
// Edit a schema, run `go generate ./...`, and commit the schema together
// with the regenerated gen/*_gen.go; CI fails when they disagree.
package threegs

//go:generate go run ./internal/schemagen/cmd/schemagen -schema schema -out gen -pkg github.com/three-good-sources/3gs/gen -contract schema/CONTRACT.md -readme README.md
