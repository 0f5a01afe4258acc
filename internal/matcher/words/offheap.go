package words

// The tables this package builds (about 1.3 MB: the lexicon's line
// offsets, Zipf values and hash slots, the vectors' word lengths, blocks
// and hash slots) live as long as the process, hold no pointers, and
// never change once built. On the collector's heap they counted as live
// memory, and the collector lets the heap grow to twice what is live
// before it collects, so a small registry's server peaked about 1.3 MB
// higher for tables it pays for once anyway. They are mapped apart from
// the heap where the system allows (table), and made on the heap
// elsewhere. BenchmarkTablesHeap measures it: loading leaves about 1 KB
// live on the heap with the tables mapped, 1,346,176 bytes with them on
// the heap.

// number is what the tables hold.
type number interface{ uint8 | uint32 | float32 }

// heapTables makes table allocate on the heap, for a benchmark that
// builds the tables again and again: a mapping is never given back, so
// each rebuild would keep another 1.3 MB for the life of the process.
// The tables are written once, under a sync.Once, and only read after:
// the race detector does not watch mapped memory, so that is what keeps
// them race-free.
var heapTables bool
