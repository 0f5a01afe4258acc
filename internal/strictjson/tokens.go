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
	// kindLazy is an object or array of a large document left untokenized:
	// the text [off, off+n) of the document, tokenized by the decoder when
	// it reads the value and dropped once it has (see split).
	kindLazy
)

// token is one event of the document in preorder. Flattening the document
// into a slice first lets generated decoders be plain recursive descent with
// O(1) skipping of unwanted values.
//
// The layout is kept to 16 bytes and free of pointers: the slice is the
// decoder's main cost, in time and in memory (a registry of 100,000
// categories is 11 million tokens, 270 MB at 24 bytes with a string header
// each, all of it scanned by the collector). A string is the range
// [off, off+n) of the document's text; one sonic had to unescape lives in
// the tokenizer's ext instead, at index off. A number's value is kept
// aside, in the tokenizer's nums, since documents hold few numbers and
// many strings.
type token struct {
	off, n uint32 // string value, key, or the number's source text
	// aux is, for kindObject and kindArray, the index of their kindEnd;
	// for kindNumber, the index of the value in nums; for kindBool, 1 for
	// true.
	aux   uint32
	kind  kind
	isInt bool // the number fits int64 and has no fraction or exponent
	ext   bool // the text is ext[off], not in the document
}

// MaxDepth is the default bound on nesting of objects and arrays. The
// documents 3gs reads nest at most five levels; the bound stops a hostile
// input from driving the parser's recursion deep.
const MaxDepth = 64

// errTooDeep stops the traversal as soon as the depth bound is passed.
var errTooDeep = errors.New("nesting too deep")

// tokenizer receives sonic's preorder callbacks and records them as tokens.
type tokenizer struct {
	src      string   // the document's text, which tokens' ranges point into
	ext      []string // strings that are not ranges of src (unescaped ones)
	toks     []token
	nums     []uint64 // numbers' values: int64 bits when isInt, else float64 bits
	open     []int32  // indexes of the objects and arrays not yet closed
	maxDepth int
}

// text returns a token for the string s: its range in src when it lies
// there, else its index in ext. The range keeps the traversal's tokens
// the same as the flat scanner's (flat.go), which TestFlatMatchesTraversal
// and FuzzFlat hold them to; it saves no byte (registry
// BenchmarkLoadGenerated/10000 and mcp BenchmarkHandle/mix-v1 allocate the
// same with every string in ext).
func (t *tokenizer) text(k kind, s string) token {
	if len(s) == 0 {
		return token{kind: k}
	}
	base := uintptr(unsafe.Pointer(unsafe.StringData(t.src)))
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	if off := p - base; p >= base && off+uintptr(len(s)) <= uintptr(len(t.src)) && off+uintptr(len(s)) <= math.MaxUint32 {
		return token{kind: k, off: uint32(off), n: uint32(len(s))}
	}
	t.ext = append(t.ext, s)
	return token{kind: k, off: uint32(len(t.ext) - 1), n: uint32(len(s)), ext: true}
}

// str is the text of a string, key or number token.
func (t *tokenizer) str(tok *token) string {
	switch {
	case tok.n == 0:
		return ""
	case tok.ext:
		return t.ext[tok.off]
	}
	return t.src[tok.off : tok.off+tok.n]
}

// number records a number token whose value has the given bits.
func (t *tokenizer) number(bits uint64, isInt bool, text string) {
	tok := t.text(kindNumber, text)
	tok.isInt, tok.aux = isInt, uint32(len(t.nums))
	t.toks = append(t.toks, tok)
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
	t.toks = append(t.toks, t.text(kindString, v))
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
	t.toks = append(t.toks, t.text(kindKey, key))
	return nil
}

// tokenizers recycles token buffers: allocating and then garbage-collecting
// a fresh pointer-rich slice per document cost more than parsing it. It
// pays on the load of a registry, whose lazy values each take one:
// loading 10,000 categories (registry BenchmarkLoadGenerated/10000)
// allocates 10.8 MB with it and 33.2 MB without (160,000 allocations
// against 30,000). Per request it saves 1% (mcp BenchmarkHandle/mix-v1,
// 25760 against 26020 B/op).
var tokenizers = sync.Pool{New: func() any { return new(tokenizer) }}

// release clears the buffer (so it holds no strings from the document) and
// returns it to the pool. Buffers grown by an unusually large document are
// dropped rather than kept.
func (t *tokenizer) release() {
	if cap(t.toks) > maxPooledTokens {
		return
	}
	clear(t.ext) // the tokens hold no pointers; ext's strings would pin documents
	t.src, t.ext = "", t.ext[:0]
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
		at := invalidUTF8At(data)
		return &Error{Reason: "invalid UTF-8 at byte " + strconv.Itoa(at), Offset: at + 1}
	}
	// A copy, as the caller may reuse data once decoded; in place, none
	// (the copy used to be made either way, and dropped: 150 MB of garbage
	// at 100,000 categories). The unsafe view pays: loading 10,000
	// categories (registry BenchmarkLoadGenerated/10000) allocates 10.8 MB
	// with it and 26.1 MB with a copy.
	var src string
	if inPlace {
		src = unsafe.String(unsafe.SliceData(data), len(data))
	} else {
		src = string(data)
	}
	t.src = src
	t.maxDepth = maxDepth
	if len(data) >= splitFrom {
		return t.split(data)
	}
	if t.flat() {
		return nil
	}
	// The depth-bounded traversal runs first, so a deeply nested document is
	// reported as such rather than as whatever the validator trips on first.
	err := ast.Preorder(src, t, nil)
	if errors.Is(err, errTooDeep) {
		return tooDeep(maxDepth)
	}
	// The traversal stops after the first value; the validator also
	// rejects anything after it, and locates syntax errors.
	if e := validate(data); e != nil {
		return e
	}
	if err != nil {
		return errUnrepresentable()
	}
	return nil
}

func tooDeep(maxDepth int) *Error {
	return &Error{Reason: "nesting deeper than " + strconv.Itoa(maxDepth) + " levels"}
}

func errUnrepresentable() *Error {
	return &Error{Reason: "invalid JSON: a value cannot be represented (numbers must fit a 64-bit float)"}
}

// validate checks that data is one JSON value, locating a syntax error.
func validate(data []byte) *Error {
	if ok, pos := encoder.Valid(data); !ok {
		if pos < 0 || pos >= len(data) {
			return &Error{Reason: "invalid JSON: unexpected end of input"}
		}
		return &Error{Reason: "invalid JSON: syntax error at byte " + strconv.Itoa(pos), Offset: pos + 1}
	}
	return nil
}
