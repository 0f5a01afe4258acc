package strictjson

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"

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
	kindObject // begins an object; token.end is the index of its kindEnd
	kindArray  // begins an array; token.end is the index of its kindEnd
	kindKey
	kindEnd
)

// token is one event of the document in preorder. Flattening the document
// into a slice first lets generated decoders be plain recursive descent with
// O(1) skipping of unwanted values.
//
// The layout is kept to 32 bytes: the slice is the decoder's main cost.
type token struct {
	str   string // string value, key, or the number's source text
	num   uint64 // int64 bits when isInt, else float64 bits
	end   int32  // for kindObject and kindArray
	kind  kind
	bool  bool
	isInt bool // the number fits int64 and has no fraction or exponent
}

func (t *token) int() int64     { return int64(t.num) }
func (t *token) float() float64 { return math.Float64frombits(t.num) }

// MaxDepth is the default bound on nesting of objects and arrays. The
// documents 3gs reads nest at most five levels; the bound stops a hostile
// input from driving the parser's recursion deep.
const MaxDepth = 64

// errTooDeep stops the traversal as soon as the depth bound is passed.
var errTooDeep = errors.New("nesting too deep")

// tokenizer receives sonic's preorder callbacks and records them as tokens.
type tokenizer struct {
	toks     []token
	open     []int32 // indexes of the objects and arrays not yet closed
	maxDepth int
}

func (t *tokenizer) OnNull() error { t.toks = append(t.toks, token{kind: kindNull}); return nil }

func (t *tokenizer) OnBool(v bool) error {
	t.toks = append(t.toks, token{kind: kindBool, bool: v})
	return nil
}

func (t *tokenizer) OnString(v string) error {
	t.toks = append(t.toks, token{kind: kindString, str: v})
	return nil
}

func (t *tokenizer) OnInt64(v int64, n json.Number) error {
	t.toks = append(t.toks, token{kind: kindNumber, isInt: true, num: uint64(v), str: string(n)})
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
	t.toks = append(t.toks, token{kind: kindNumber, num: math.Float64bits(f), str: string(n)})
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
	t.toks[top].end = int32(len(t.toks))
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
	t.toks, t.open = t.toks[:0], t.open[:0]
	tokenizers.Put(t)
}

const maxPooledTokens = 1 << 14

// tokenize checks that data is one well-formed UTF-8 JSON value and flattens
// it into t. Errors name a byte offset, never the input text.
func (t *tokenizer) tokenize(data []byte, maxDepth int) *Error {
	if !utf8.Valid(data) {
		return &Error{Reason: "invalid UTF-8 at byte " + strconv.Itoa(invalidUTF8At(data))}
	}
	// The depth-bounded traversal runs first, so a deeply nested document is
	// reported as such rather than as whatever the validator trips on first.
	t.maxDepth = maxDepth
	err := ast.Preorder(string(data), t, nil)
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
