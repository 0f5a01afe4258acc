package cli

import (
	"os"
	"runtime/debug"
)

// Go's collector lets the heap grow to twice what is live before it
// collects. Most of what a large registry costs stays live for as long as
// it is served (the file, its decoded categories, the match index: about
// 1.7 times the file at 100,000 categories), so by default a 147 MB
// registry would peak near twice that, as it did at 650 MiB when more was
// live.
// A soft limit from the registry's size makes the collector run before
// the heap doubles instead.
const (
	// memoryLimitFrom is the registry size from which a limit is set;
	// below it the doubling costs at most a few tens of MiB.
	memoryLimitFrom = 16 << 20
	// memoryLimitPerByte and memoryLimitBase make the limit: the live
	// heap (~1.7 bytes per registry byte once the index is built, ~1.95
	// for a moment while it is built, at 100,000 registrytest categories)
	// plus room for requests. At 147 MiB this is 356 MiB, and a server
	// peaks near 365 MiB resident. 2.5 (400 MiB) let the heap grow to
	// 405-425 MiB; the build makes little garbage now, so the tighter
	// limit costs two or three collections more, not a run of them
	// (a limit of 355 MiB did, while the build threw away 300 MB).
	memoryLimitPerByte = 2.2
	memoryLimitBase    = 32 << 20
)

// limitMemoryFor sets a soft memory limit for serving or checking the
// registry file at path, unless the user chose one with GOMEMLIMIT. The
// limit is soft: when more is live the heap grows past it, and the
// collector only works harder.
func limitMemoryFor(env *Env, path string) {
	if path == "" || env.Getenv("GOMEMLIMIT") != "" {
		return
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() < memoryLimitFrom {
		return
	}
	debug.SetMemoryLimit(memoryLimitFor(fi.Size()))
}

// memoryLimitFor is the soft limit for a registry file of size bytes.
func memoryLimitFor(size int64) int64 {
	return int64(float64(size)*memoryLimitPerByte) + memoryLimitBase
}
