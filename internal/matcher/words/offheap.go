package words

// The tables this package builds (about 1.3 MB: the lexicon's line
// offsets, Zipf values and hash slots, the vectors' word lengths, blocks
// and hash slots) live as long as the process, hold no pointers, and
// never change once built. On the collector's heap they counted as live
// memory, and the collector lets the heap grow to twice what is live
// before it collects, so a small registry's server peaked about 1.3 MB
// higher for tables it pays for once anyway. They are mapped apart from
// the heap where the system allows (table), and made on the heap
// elsewhere.

// number is what the tables hold.
type number interface{ uint8 | uint32 | float32 }
