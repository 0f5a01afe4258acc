package strictjson

import (
	"strings"
)

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
