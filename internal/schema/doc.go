// Package schema reads the schema directory (contract.json, the document
// schemas *.schema.json and the tool files tools/*.json) into a checked
// model: the node tree of every schema, the tools with their manifests and
// examples, and the Surface that 3gs schema diff compares. It refuses any
// keyword it cannot enforce, naming the file and the place.
//
// It depends on nothing but the standard library, so the 3gs binary, which
// needs the model for schema diff, does not link the code generator
// (internal/schemagen, with jennifer and go-jsonschema), which builds on it.
package schema
