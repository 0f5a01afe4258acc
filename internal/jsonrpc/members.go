package jsonrpc

// Members reads the top-level members of the JSON object obj whose keys are
// in keys, exactly: vals[i] is set to the raw value of keys[i] (nil when
// absent; the last copy when repeated). obj must be valid JSON, as Parse
// and the validator establish before anything is read; Members reports
// false when it is not an object. It allocates nothing unless a key is
// written with escapes, and replaces a reflective decode of an envelope
// whose members all stay raw.
func Members(obj []byte, keys []string, vals [][]byte) bool {
	clear(vals)
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return true
	}
	for i < len(obj) {
		if obj[i] != '"' {
			return false
		}
		start := i
		end, escaped := stringEnd(obj, i)
		if end < 0 {
			return false
		}
		key, ok := keyText(obj[start:end], escaped)
		if !ok {
			return false
		}
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		i = skipSpace(obj, i+1)
		vstart := i
		i = valueEnd(obj, i)
		if i < 0 {
			return false
		}
		for k, want := range keys {
			if string(key) == want {
				vals[k] = obj[vstart:i:i]
				break
			}
		}
		i = skipSpace(obj, i)
		if i >= len(obj) {
			return false
		}
		switch obj[i] {
		case ',':
			i = skipSpace(obj, i+1)
		case '}':
			return true
		default:
			return false
		}
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// stringEnd returns the offset just past the string starting at b[i] (a
// quote), and whether it holds escapes; -1 when it does not end.
func stringEnd(b []byte, i int) (int, bool) {
	escaped := false
	for i++; i < len(b); i++ {
		switch b[i] {
		case '"':
			return i + 1, escaped
		case '\\':
			escaped = true
			i++
		}
	}
	return -1, escaped
}

// valueEnd returns the offset just past the value starting at b[i], or -1.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end, _ := stringEnd(b, i)
		return end
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end, _ := stringEnd(b, i)
				if end < 0 {
					return -1
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
	}
	return i
}

// String decodes the JSON string raw. A string without escapes, the usual
// case, is sliced rather than decoded; known, when one of its entries
// equals the text, is returned instead, so that method and tool names cost
// no allocation.
func String(raw []byte, known ...string) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if end, escaped := stringEnd(raw, 0); end == len(raw) && !escaped {
		text := raw[1 : len(raw)-1]
		for _, k := range known {
			if string(text) == k {
				return k, true
			}
		}
		return string(text), true
	}
	var s string
	if api.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
