package strictjson

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
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
// there, else its index in ext.
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
// a fresh pointer-rich slice per document cost more than parsing it.
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
	// at 100,000 categories).
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

// flat tokenizes t.src when it is an object whose values are all strings
// without escapes, true, false or null, as nearly every tool call's
// arguments are ({"query":"..."}): one pass over the text, where sonic's
// traversal and then its validator made two, through callbacks. It
// produces the tokens the traversal would and accepts only valid JSON;
// on anything else (an escape, a number, a nested value, a syntax error)
// it leaves t empty and reports false, and tokenize reads the document
// the general way, which also locates any error.
func (t *tokenizer) flat() bool {
	src := t.src
	i := skipSpace(src, 0)
	if i == len(src) || src[i] != '{' || t.maxDepth < 1 {
		return false
	}
	base := len(t.toks)
	t.toks = append(t.toks, token{kind: kindObject})
	i = skipSpace(src, i+1)
	if i < len(src) && src[i] == '}' {
		return t.flatEnd(base, i)
	}
	for {
		// A key, a colon, a value.
		end, ok := plainString(src, i)
		if !ok {
			break
		}
		t.toks = append(t.toks, plainToken(kindKey, i, end))
		i = skipSpace(src, end)
		if i == len(src) || src[i] != ':' {
			break
		}
		i = skipSpace(src, i+1)
		if i == len(src) {
			break
		}
		switch c := src[i]; {
		case c == '"':
			if end, ok = plainString(src, i); !ok {
				break
			}
			t.toks = append(t.toks, plainToken(kindString, i, end))
			i = end
		case strings.HasPrefix(src[i:], "true"):
			t.toks = append(t.toks, token{kind: kindBool, aux: 1})
			i += 4
		case strings.HasPrefix(src[i:], "false"):
			t.toks = append(t.toks, token{kind: kindBool})
			i += 5
		case strings.HasPrefix(src[i:], "null"):
			t.toks = append(t.toks, token{kind: kindNull})
			i += 4
		default:
			ok = false
		}
		if !ok {
			break
		}
		i = skipSpace(src, i)
		if i == len(src) {
			break
		}
		if src[i] == '}' {
			return t.flatEnd(base, i)
		}
		if src[i] != ',' {
			break
		}
		i = skipSpace(src, i+1)
	}
	t.toks = t.toks[:base]
	return false
}

// flatEnd closes the object flat read, whose token is at base and whose
// '}' is at i, if nothing but space follows it.
func (t *tokenizer) flatEnd(base, i int) bool {
	if skipSpace(t.src, i+1) != len(t.src) {
		t.toks = t.toks[:base]
		return false
	}
	t.toks[base].aux = uint32(len(t.toks))
	t.toks = append(t.toks, token{kind: kindEnd})
	return true
}

// plainToken is the token of the string literal src[from:to], which has
// no escapes: its range without the quotes, as text makes it.
func plainToken(k kind, from, to int) token {
	if to-from == 2 {
		return token{kind: k}
	}
	return token{kind: k, off: uint32(from + 1), n: uint32(to - from - 2)}
}

// plainString is the index after the string literal starting at i, when
// there is one there that JSON accepts as written: no escape and no
// control character (the text is valid UTF-8, checked before).
func plainString(s string, i int) (int, bool) {
	if i >= len(s) || s[i] != '"' {
		return 0, false
	}
	for i++; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\' || c < 0x20:
			return 0, false
		}
	}
	return 0, false
}

// splitFrom is the document size from which tokenize leaves the objects
// and arrays below splitDepth as kindLazy tokens: a registry's categories.
// Tokenized whole, a registry of 100,000 categories needed 11 million
// tokens (180 MB) alive beside its 150 MB of text; split, it needs one
// token per category at the top and one category's tokens at a time,
// reusing one pooled buffer. Tool arguments are far smaller.
const splitFrom = 64 << 10

// splitDepth is the depth of the containers left lazy: the values of the
// members of the document's top-level members (each category of
// "categories", each endorsement of "endorsements").
const splitDepth = 2

// split tokenizes a large document down to splitDepth. The whole text is
// checked for syntax, and the scan is kept only for valid JSON, so the
// lazy parts can fail later only on a number too large to represent,
// which the decoder then reports at the value's path. The scan also
// measures the nesting, which for valid JSON is what depthOver would find;
// depthOver reads the whole text only when something is wrong, so that
// nesting too deep is reported first, as it always was.
func (t *tokenizer) split(data []byte) *Error {
	// The syntax is checked on another core while the scan runs: the scan
	// stops, without reading out of bounds, at text it cannot read, and
	// what it made of a document that is not JSON is dropped.
	syntax := make(chan *Error, 1)
	go func() { syntax <- validate(data) }()
	i := skipSpace(t.src, 0)
	err := t.splitValue(&i, 0)
	if e := <-syntax; e != nil {
		if depthOver(data, t.maxDepth) {
			return tooDeep(t.maxDepth)
		}
		return e
	}
	if err != nil {
		if errors.Is(err, errTooDeep) || depthOver(data, t.maxDepth) {
			return tooDeep(t.maxDepth)
		}
		return errUnrepresentable()
	}
	return nil
}

// errMalformed stops a scan of text that is not JSON.
var errMalformed = errors.New("malformed JSON")

func (t *tokenizer) splitValue(i *int, depth int) error {
	src := t.src
	if *i >= len(src) {
		return errMalformed
	}
	switch c := src[*i]; c {
	case '{', '[':
		if depth >= splitDepth {
			end, deepest := containerEnd(src, *i)
			if depth+deepest > t.maxDepth {
				return errTooDeep
			}
			t.toks = append(t.toks, token{kind: kindLazy, off: uint32(*i), n: uint32(end - *i)})
			*i = end
			return nil
		}
		k, closing := kindObject, byte('}')
		if c == '[' {
			k, closing = kindArray, ']'
		}
		if err := t.begin(k); err != nil {
			return err
		}
		*i = skipSpace(src, *i+1)
		if *i >= len(src) {
			return errMalformed
		}
		if src[*i] == closing {
			*i++
			return t.end()
		}
		for {
			if k == kindObject {
				if *i >= len(src) {
					return errMalformed
				}
				end := stringEnd(src, *i)
				if err := t.scalar(*i, end, kindKey); err != nil {
					return err
				}
				*i = skipSpace(src, skipSpace(src, end)+1) // past the colon
			}
			if err := t.splitValue(i, depth+1); err != nil {
				return err
			}
			*i = skipSpace(src, *i)
			if *i >= len(src) {
				return errMalformed
			}
			if src[*i] == ',' {
				*i = skipSpace(src, *i+1)
				continue
			}
			*i++ // the closing bracket
			return t.end()
		}
	case '"':
		end := stringEnd(src, *i)
		err := t.scalar(*i, end, kindString)
		*i = end
		return err
	default:
		end := *i
		for end < len(src) && !strings.ContainsRune(",}] \t\r\n", rune(src[end])) {
			end++
		}
		if end == *i {
			return errMalformed
		}
		err := t.scalar(*i, end, 0)
		*i = end
		return err
	}
}

// scalar tokenizes the literal src[from:to]: a string without escapes
// directly as its range (as a key when k is kindKey), anything else
// through sonic.
func (t *tokenizer) scalar(from, to int, k kind) error {
	lit := t.src[from:to]
	if lit[0] == '"' && strings.IndexByte(lit, '\\') < 0 {
		t.toks = append(t.toks, token{kind: k, off: uint32(from + 1), n: uint32(to - from - 2)})
		return nil
	}
	if err := ast.Preorder(lit, t, nil); err != nil {
		return err
	}
	if k == kindKey {
		t.toks[len(t.toks)-1].kind = kindKey
	}
	return nil
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index after the string literal starting at i (len(s)
// if it has no end). Its closing quote is the first one not escaped, that
// is, not after an odd number of backslashes; quotes are found with
// strings.IndexByte, since strings are most of a registry's text.
func stringEnd(s string, i int) int {
	for from := i + 1; ; {
		k := strings.IndexByte(s[from:], '"')
		if k < 0 {
			return len(s)
		}
		q := from + k
		backslashes := 0
		for b := q - 1; b > i && s[b] == '\\'; b-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return q + 1
		}
		from = q + 1
	}
}

// containerEnd is the index after the object or array starting at i, and
// how deep objects and arrays nest in it (1 for none inside).
func containerEnd(s string, i int) (end, deepest int) {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '"':
			i = stringEnd(s, i) - 1
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1, deepest
			}
		}
	}
	return len(s), deepest
}

// depthOver reports whether objects and arrays nest deeper than max
// anywhere in data, read as JSON would be (brackets in strings do not
// count); malformed text is left to the validator.
func depthOver(data []byte, max int) bool {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			if depth++; depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// expand tokenizes a kindLazy token's text into a pooled tokenizer of its
// own, which the caller releases once the value is read.
func (t *tokenizer) expand(lazy *token) (*tokenizer, *Error) {
	sub := tokenizers.Get().(*tokenizer)
	sub.src = t.src[lazy.off : lazy.off+lazy.n]
	sub.maxDepth = t.maxDepth
	if err := ast.Preorder(sub.src, sub, nil); err != nil {
		sub.release()
		return nil, errUnrepresentable()
	}
	return sub, nil
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
