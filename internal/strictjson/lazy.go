package strictjson

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/bytedance/sonic/ast"
)

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
