package strictjson

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/bytedance/sonic/ast"
	"github.com/bytedance/sonic/encoder"
)

// kind is the sort of a token in the flattened document.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindString
	kindNumber
	kindObject // begins an object; token.aux is the index of its kindEnd
	kindArray  // begins an array; token.aux is the index of its kindEnd
	kindKey
	kindEnd
)

// token is one event of the document in preorder. Flattening the document
// into a slice first lets generated decoders be plain recursive descent with
// O(1) skipping of unwanted values.
//
// The layout is kept to 24 bytes: the slice is the decoder's main cost,
// in time and in memory (a registry of 100,000 categories is 5 million
// tokens). A number's value is kept aside, in the tokenizer's nums, since
// documents hold few numbers and many strings.
type token struct {
	str string // string value, key, or the number's source text
	// aux is, for kindObject and kindArray, the index of their kindEnd;
	// for kindNumber, the index of the value in nums; for kindBool, 1 for
	// true.
	aux   uint32
	kind  kind
	isInt bool // the number fits int64 and has no fraction or exponent
}

// MaxDepth is the default bound on nesting of objects and arrays. The
// documents 3gs reads nest at most five levels; the bound stops a hostile
// input from driving the parser's recursion deep.
const MaxDepth = 64

// errTooDeep stops the traversal as soon as the depth bound is passed.
var errTooDeep = errors.New("nesting too deep")

// tokenizer receives sonic's preorder callbacks and records them as tokens.
type tokenizer struct {
	toks     []token
	nums     []uint64 // numbers' values: int64 bits when isInt, else float64 bits
	open     []int32  // indexes of the objects and arrays not yet closed
	maxDepth int
}

// number records a number token whose value has the given bits.
func (t *tokenizer) number(bits uint64, isInt bool, text string) {
	t.toks = append(t.toks, token{kind: kindNumber, isInt: isInt, aux: uint32(len(t.nums)), str: text})
	t.nums = append(t.nums, bits)
}

func (t *tokenizer) OnNull() error { t.toks = append(t.toks, token{kind: kindNull}); return nil }

func (t *tokenizer) OnBool(v bool) error {
	tok := token{kind: kindBool}
	if v {
		tok.aux = 1
	}
	t.toks = append(t.toks, tok)
	return nil
}

func (t *tokenizer) OnString(v string) error {
	t.toks = append(t.toks, token{kind: kindString, str: v})
	return nil
}

func (t *tokenizer) OnInt64(v int64, n json.Number) error {
	t.number(uint64(v), true, string(n))
	return nil
}

func (t *tokenizer) OnFloat64(v float64, n json.Number) error {
	// sonic reports integers too large for int64 as floats; strconv gives the
	// correctly rounded value for every form, so use it rather than trust
	// the fast path for exotic inputs.
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		f = v
	}
	t.number(math.Float64bits(f), false, string(n))
	return nil
}

func (t *tokenizer) begin(k kind) error {
	if len(t.open) >= t.maxDepth {
		return errTooDeep
	}
	t.open = append(t.open, int32(len(t.toks)))
	t.toks = append(t.toks, token{kind: k})
	return nil
}

func (t *tokenizer) end() error {
	top := t.open[len(t.open)-1]
	t.open = t.open[:len(t.open)-1]
	t.toks[top].aux = uint32(len(t.toks))
	t.toks = append(t.toks, token{kind: kindEnd})
	return nil
}

func (t *tokenizer) OnObjectBegin(int) error { return t.begin(kindObject) }
func (t *tokenizer) OnObjectEnd() error      { return t.end() }
func (t *tokenizer) OnArrayBegin(int) error  { return t.begin(kindArray) }
func (t *tokenizer) OnArrayEnd() error       { return t.end() }

func (t *tokenizer) OnObjectKey(key string) error {
	t.toks = append(t.toks, token{kind: kindKey, str: key})
	return nil
}

// tokenizers recycles token buffers: allocating and then garbage-collecting
// a fresh pointer-rich slice per document cost more than parsing it.
var tokenizers = sync.Pool{New: func() any { return new(tokenizer) }}

// release clears the buffer (so it holds no strings from the document) and
// returns it to the pool. Buffers grown by an unusually large document are
// dropped rather than kept.
func (t *tokenizer) release() {
	if cap(t.toks) > maxPooledTokens {
		return
	}
	clear(t.toks)
	t.toks, t.nums, t.open = t.toks[:0], t.nums[:0], t.open[:0]
	tokenizers.Put(t)
}

const maxPooledTokens = 1 << 14

// tokenize checks that data is one well-formed UTF-8 JSON value and flattens
// it into t. Errors name a byte offset, never the input text. The strings
// of the tokens point into a copy of data, or, when inPlace, into data
// itself (DecodeInPlace).
func (t *tokenizer) tokenize(data []byte, maxDepth int, inPlace bool) *Error {
	if !utf8.Valid(data) {
		return &Error{Reason: "invalid UTF-8 at byte " + strconv.Itoa(invalidUTF8At(data))}
	}
	// A large document gets its token buffer at its final size: grown by
	// appending, a registry of 100,000 categories (5 million tokens) went
	// through buffers adding up to four times the last one, and the old
	// and new buffer of each step were held at once.
	if len(data) >= presizeFrom {
		if n := countTokens(data); n > cap(t.toks) {
			t.toks = make([]token, 0, n)
		}
	}
	src := string(data) // a copy: the caller may reuse data once decoded
	if inPlace && len(data) > 0 {
		src = unsafe.String(unsafe.SliceData(data), len(data))
	}
	// The depth-bounded traversal runs first, so a deeply nested document is
	// reported as such rather than as whatever the validator trips on first.
	t.maxDepth = maxDepth
	err := ast.Preorder(src, t, nil)
	if errors.Is(err, errTooDeep) {
		return &Error{Reason: "nesting deeper than " + strconv.Itoa(maxDepth) + " levels"}
	}
	// The traversal stops after the first value; the validator also
	// rejects anything after it, and locates syntax errors.
	if ok, pos := encoder.Valid(data); !ok {
		if pos < 0 || pos >= len(data) {
			return &Error{Reason: "invalid JSON: unexpected end of input"}
		}
		return &Error{Reason: "invalid JSON: syntax error at byte " + strconv.Itoa(pos)}
	}
	if err != nil {
		return &Error{Reason: "invalid JSON: a value cannot be represented (numbers must fit a 64-bit float)"}
	}
	return nil
}

func invalidUTF8At(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(data)
}

// presizeFrom is the document size from which tokenize counts the tokens
// first. A tool call's arguments are far smaller, and the pooled buffers
// already fit them; counting would only add a pass over the bytes.
const presizeFrom = 64 << 10

// countTokens is the number of tokens tokenize records for data, when data
// is well-formed JSON: two for each object and array (begin and end), one
// for each string (a key or a value), and one for each number, true,
// false and null, found as the first byte of a value. For malformed input
// it is only an estimate, which is all a buffer's capacity needs to be.
func countTokens(data []byte) int {
	n := 0
	prev := byte(',') // a value may start the document
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			n++
			// Jump to the closing quote: one not preceded by an odd run of
			// backslashes.
			for i++; i < len(data); i++ {
				if data[i] == '\\' {
					i++
				} else if data[i] == '"' {
					break
				}
			}
		case '{', '[':
			n += 2
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 't', 'f', 'n':
			if prev == ':' || prev == ',' || prev == '[' {
				n++
			}
		}
		prev = data[min(i, len(data)-1)]
	}
	return n
}
