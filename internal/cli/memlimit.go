package cli

import (
	"os"
	"runtime/debug"
)

// Go's collector lets the heap grow to twice what is live before it
// collects. Most of what a large registry costs stays live for as long as
// it is served (the file, its decoded categories, the match index: about
// 2.1 times the file at 100,000 categories), so by default a 147 MB
// registry peaked near 650 MiB resident while 330 MB were live.
// A soft limit from the registry's size makes the collector run before
// the heap doubles instead.
const (
	// memoryLimitFrom is the registry size from which a limit is set;
	// below it the doubling costs at most a few tens of MiB.
	memoryLimitFrom = 16 << 20
	// memoryLimitPerByte and memoryLimitBase make the limit: the live
	// heap (~2.1 bytes per registry byte once loaded, ~2.6 for a moment
	// while the index is built) plus room for requests. At 147 MiB this
	// is 400 MiB: a limit of 355 MiB gave the same peak RSS (420-425 MiB,
	// set by the index build's moment) but kept the collector running
	// back to back through the build, and the first answer came 1.7x
	// later (6.2-6.4 s against 3.4-3.8 s, same run).
	memoryLimitPerByte = 2.5
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
