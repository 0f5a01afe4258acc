package gen

import "github.com/three-good-sources/3gs/internal/strictjson"

// DecodeRegistryInPlace is DecodeRegistry for bytes the caller keeps,
// unchanged, for as long as the registry is used: its strings point into
// data instead of into a copy (strictjson.DecodeInPlace). The registry
// package decodes so, since it keeps a registry's exact bytes anyway.
// Written by hand: the generator makes only *_gen.go.
func DecodeRegistryInPlace(data []byte) (*Registry, error) {
	return strictjson.DecodeInPlace(data, decodeRegistry)
}
