package cli

import (
	"fmt"
	"strconv"

	"github.com/three-good-sources/3gs/internal/registry"
)

// registryLimitFlag declares --max-registry-bytes, for every command that
// reads a registry file: each must accept the registries the others do, so
// a curator who raises the limit for serve raises it the same way for
// validate, sign and verify.
func registryLimitFlag(f *Flags, p *intFlag) {
	f.IntVar(p, "max-registry-bytes", "THREEGS_MAX_REGISTRY_BYTES", strconv.Itoa(registry.MaxSize), minRegistryBytes,
		"largest registry file read, in bytes; a larger one is refused before it is read. The default holds 100,000 categories with room to spare")
}

// minRegistryBytes is the lowest --max-registry-bytes: no valid registry
// is smaller, so a lower limit could only be a typo.
const minRegistryBytes = 1024

// registryLimit is --max-registry-bytes, checked.
func registryLimit(v intFlag) (int64, error) {
	n, err := v.get()
	return int64(n), err
}

// registryFile is --registry (REGISTRY_PATH), the registry file a command
// reads when no PATH is given, and --max-registry-bytes, the most of it
// read: the pair every command that reads a registry file declares.
type registryFile struct {
	registry    string
	maxRegistry intFlag
}

// flags declares both; usage is --registry's.
func (o *registryFile) flags(f *Flags, usage string) {
	f.StringVar(&o.registry, "registry", "REGISTRY_PATH", "", usage)
	registryLimitFlag(f, &o.maxRegistry)
}

// sizeLimit is --max-registry-bytes, checked; a bad value is reported on
// stderr as "3gs COMMAND: ...", and ok is false.
func (o *registryFile) sizeLimit(f *Flags) (limit int64, ok bool) {
	limit, err := registryLimit(o.maxRegistry)
	if err != nil {
		fmt.Fprintf(f.env.Stderr, "%s: %v\n", f.name, err)
		return 0, false
	}
	return limit, true
}
