package peer

import "github.com/three-good-sources/3gs/internal/fetch"

// A signed registry can still be built to cost its readers far more than
// it holds: megabytes of whitespace between tokens, or a few categories
// in a document hundreds of times their size, verify and decode like any
// other, and each byte is held, cached and decoded on every node that
// endorses its curator. checkShape refuses such a document in one pass
// over its bytes, before the decode, whose cost grows with them.
const (
	// shapeFloor is the size below which the shape is not judged: no
	// registry that small costs anything worth refusing.
	shapeFloor = 64 << 10
	// shapeBase and shapePerCategory bound a registry's size by what its
	// categories need: 1 MiB for everything outside them (256
	// endorsements at their longest fit), and 64 KiB per category, above
	// the longest category the schema allows in ASCII (about 47,000
	// characters), 45 times the 1.4 KB curators write, and room enough
	// for text escaped as \uXXXX.
	shapeBase        = 1 << 20
	shapePerCategory = 64 << 10
)

// checkShape refuses data, a registry's bytes, when more than half of it
// is whitespace between tokens or it is larger than its categories
// explain (shapeBase + shapePerCategory each). Both are refused as too
// large: the size, not the content, is what is wrong.
func checkShape(data []byte) error {
	if len(data) <= shapeFloor {
		return nil
	}
	ws, cats := shape(data)
	if ws > len(data)/2 {
		return refuseAs(fetch.RefusedTooLarge, "registry: %d of its %d bytes are whitespace between tokens; a registry is refused when more than half of it is, since every byte is held, cached and decoded by each node that reads it; its curator writes it compactly or with plain indentation (3gs sign signs what 3gs writes)", ws, len(data))
	}
	if allowed := shapeBase + int64(cats)*shapePerCategory; int64(len(data)) > allowed {
		return refuseAs(fetch.RefusedTooLarge, "registry: %d bytes for %d categories, more than the %d bytes they can need (1 MiB plus 64 KiB a category)", len(data), cats, allowed)
	}
	return nil
}

// shape counts, in one pass and without decoding, the whitespace bytes
// outside strings and the members of the top-level "categories" object.
// It assumes nothing of data being valid JSON: on anything else the
// counts are merely meaningless, and the decoder that runs next refuses
// it.
func shape(data []byte) (ws, cats int) {
	var (
		depth     int
		kind      [3]byte // '{' or '[' for the containers at depth 1 and 2
		inString  bool
		escaped   bool
		expectKey bool // the next string at this depth is a member name
		isKey     bool // the string being read is a member name
		start     int  // where it began
		inCats    bool // depth 2 is the value of the top-level "categories"
	)
	for i, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
				if isKey {
					switch depth {
					case 1:
						inCats = string(data[start:i]) == "categories"
					case 2:
						if inCats && kind[2] == '{' {
							cats++
						}
					}
				}
			}
			continue
		}
		switch b {
		case ' ', '\t', '\n', '\r':
			ws++
		case '"':
			inString, isKey, start, expectKey = true, expectKey, i+1, false
		case '{', '[':
			depth++
			if depth < len(kind) {
				kind[depth] = b
			}
			expectKey = b == '{'
		case '}', ']':
			depth--
			expectKey = false
		case ',':
			expectKey = depth > 0 && depth < len(kind) && kind[depth] == '{'
		case ':':
			expectKey = false
		}
	}
	return ws, cats
}

// CheckShape is the shape check a peer or replica makes of a registry it
// fetched, for its curator to make before publishing (3gs doctor).
func CheckShape(data []byte) error { return checkShape(data) }
