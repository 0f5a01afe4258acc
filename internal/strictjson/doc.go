// Package strictjson is the runtime behind the decoders that the schema
// generator writes into gen/.
//
// The generated decoders walk a document once and both fill Go structs and
// enforce the schema: unknown keys, keys that differ from a known one only in
// case, duplicate keys, wrong JSON types, nulls, missing required fields,
// ranges, lengths, counts, patterns, enums and formats. go-jsonschema's own
// unmarshalers check none of the key rules, and encoding/json matches keys
// case-insensitively, which is how a case-variant key once bypassed
// authorization in another Go MCP SDK; so keys here are compared byte for byte.
//
// Every problem becomes an *Error with a path (categories.rust.sources[1].rank)
// and a reason written for the person who has to fix the input. Raw parser
// messages never reach a caller: sonic's embed the input text.
package strictjson
