package jsonrpc

import (
	"bytes"
	"strconv"
)

// sonic's validator leaves four things to us:
//   - it accepts raw control characters inside strings, and
//   - escapes JSON does not have ("\0"); an id holding either would be
//     echoed back as invalid JSON;
//   - it keeps the last of two members with the same key, so a message
//     could say one thing to a proxy that reads the first and another to us;
//   - a key that differs from one we read only by case ("Method") is
//     ignored by our exact matching but read as the real key by lenient
//     decoders (encoding/json among them), another way to say two things;
//   - it calls nesting past its own limit "invalid JSON", which misleads.
//
// One pass over the bytes, with no recursion, checks them all before
// anything is decoded.

// MaxDepth bounds how deeply a message may nest objects and arrays. The
// deepest message 3gs reads (an upsert_category call) nests six levels;
// anything near this bound is an attack on some parser, not a request.
const MaxDepth = 64

// shape is what one pass over a JSON text found wrong, if anything.
type shape struct {
	ctrl   int    // offset of a raw control character in a string, or -1
	escape int    // offset of a backslash that starts no valid escape, or -1
	deep   int    // offset where nesting passed the bound, or -1
	dup    string // first key repeated in the top-level object, decoded
	dupAt  int    // offset of that repeated key, or -1
	// variant is the first top-level key that equals a known key (variantOf)
	// but for ASCII case, and variantAt its offset, or -1.
	variant, variantOf string
	variantAt          int
}

func (s shape) ok() bool {
	return s.ctrl < 0 && s.escape < 0 && s.deep < 0 && s.dupAt < 0 && s.variantAt < 0
}

// inspect scans data, which need not be valid JSON: it stops at the first
// control character or bad escape in a string, or the first level past
// maxDepth, and records the first top-level key that repeats an earlier one
// and the first that is a case variant of one of known.
func inspect(data []byte, maxDepth int, known []string) shape {
	s := shape{ctrl: -1, escape: -1, deep: -1, dupAt: -1, variantAt: -1}
	var keys keySet
	depth := 0
	// expectKey: at depth 1 of an object, the next string is a key.
	topObject, expectKey := false, false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			start, escaped := i, false
			for i++; i < len(data); i++ {
				c := data[i]
				if !inString[c] {
					continue
				}
				if c == '"' {
					break
				}
				if c == '\\' {
					escaped = true
					if n := escapeLen(data[i:]); n > 0 {
						i += n - 1
						continue
					}
					s.escape = i
					return s
				}
				s.ctrl = i
				return s
			}
			if expectKey && depth == 1 && topObject && i < len(data) && (s.dupAt < 0 || s.variantAt < 0) {
				if key, ok := keyText(data[start:i+1], escaped); ok {
					if s.dupAt < 0 && keys.addRepeats(key) {
						s.dup, s.dupAt = keys.last, start
					}
					if s.variantAt < 0 {
						if k := caseVariant(key, known); k != "" {
							s.variant, s.variantOf, s.variantAt = string(key), k, start
						}
					}
				}
			}
			expectKey = false
		case '{', '[':
			if depth == 0 && c == '{' {
				topObject = true
			}
			depth++
			if depth > maxDepth {
				s.deep = i
				return s
			}
			expectKey = c == '{' && depth == 1
		case '}', ']':
			depth--
			expectKey = false
		case ',':
			expectKey = depth == 1 && topObject
		}
	}
	return s
}

// escapeLen is the length of the escape sequence esc starts with, or 0
// when it is not one JSON allows.
func escapeLen(esc []byte) int {
	if len(esc) < 2 {
		return 0
	}
	switch esc[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(esc) < 6 {
			return 0
		}
		for _, h := range esc[2:6] {
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
				return 0
			}
		}
		return 6
	}
	return 0
}

// inString marks the bytes that stop the scan of a string: its end, an
// escape, and the control characters JSON forbids in it.
var inString = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// keySet remembers the keys of one object as spans of the text, so the
// common case allocates nothing. Few objects have more than a handful of
// keys; past 16 a map takes over, so a hostile object with thousands of
// keys costs linear time, not quadratic.
type keySet struct {
	inline [16][]byte
	n      int
	set    map[string]struct{}
	last   string
}

// keyText is the key whose quoted text is raw, decoded when it holds
// escapes, since "\u0069d" is "id" to every decoder; false when it cannot
// be decoded (the validator will refuse the text).
func keyText(raw []byte, escaped bool) ([]byte, bool) {
	if !escaped {
		return raw[1 : len(raw)-1], true
	}
	var s string
	if err := api.Unmarshal(raw, &s); err != nil {
		return nil, false
	}
	return []byte(s), true
}

// addRepeats adds key and reports whether it was already there.
func (k *keySet) addRepeats(key []byte) bool {
	if k.set != nil {
		if _, ok := k.set[string(key)]; ok {
			k.last = string(key)
			return true
		}
		k.set[string(key)] = struct{}{}
		return false
	}
	for _, x := range k.inline[:k.n] {
		if bytes.Equal(x, key) {
			k.last = string(key)
			return true
		}
	}
	if k.n < len(k.inline) {
		k.inline[k.n] = key
		k.n++
		return false
	}
	k.set = make(map[string]struct{}, 2*k.n+1)
	for _, x := range k.inline[:k.n] {
		k.set[string(x)] = struct{}{}
	}
	k.set[string(key)] = struct{}{}
	return false
}

// caseVariant returns the key of known that key equals but for ASCII
// case, or "" when there is none (or key is one of known exactly). A
// multi-byte character cannot fold onto an ASCII key of the same length
// in bytes, so comparing ASCII case is enough.
func caseVariant(key []byte, known []string) string {
	for _, k := range known {
		if len(k) != len(key) {
			continue
		}
		if string(key) == k {
			return ""
		}
		if asciiEqualFold(key, k) {
			return k
		}
	}
	return ""
}

func asciiEqualFold(a []byte, b string) bool {
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// KeyProblem is what is wrong with the keys of one JSON object, if
// anything: a key repeated, or a key that is one of known but for case.
type KeyProblem struct {
	Key    string // the key as sent, decoded
	Reason string // "duplicate key" or "differs from \"name\" only by case"
}

// CheckKeys looks for a repeated key among the members of the JSON object
// obj, or one that differs from a key in known only by case, and reports
// the first. Members deeper down are not compared; callers check each
// object they read.
func CheckKeys(obj []byte, known []string) (KeyProblem, bool) {
	s := inspect(obj, 1<<30, known)
	switch {
	case s.dupAt >= 0 && (s.variantAt < 0 || s.dupAt < s.variantAt):
		return KeyProblem{Key: s.dup, Reason: "duplicate key"}, true
	case s.variantAt >= 0:
		return KeyProblem{Key: s.variant, Reason: variantReason(s.variantOf)}, true
	}
	return KeyProblem{}, false
}

// variantReason says which known key a case variant imitates.
func variantReason(of string) string {
	return "differs from " + strconv.Quote(of) + " only by case; keys are matched exactly"
}
