// Package canonjson reads, checks and writes JSON in the canonical form that
// upstream opm gives every catalog blob.
//
// Upstream opm decodes each blob into a map[string]any and encodes it again
// with encoding/json (SetEscapeHTML(false)). The result, which this package
// calls canonical JSON, has no insignificant whitespace, object keys sorted
// by byte order without duplicates (the last one wins), numbers written as
// encoding/json writes a float64, and strings escaped exactly as
// encoding/json escapes them. Everything upstream prints or serves is derived
// from those bytes, so matching upstream byte for byte starts here.
//
// The package is built for speed on large catalogs: Canonicalize recognises
// input that is already canonical (most machine-written catalogs) in a single
// pass and returns it without copying; the reading helpers walk canonical
// bytes without decoding them; long strings are skipped eight bytes at a
// time.
package canonjson

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
)

// MaxDepth is the deepest nesting accepted, as in encoding/json.
const MaxDepth = 10000

// SyntaxError is a JSON syntax error at a byte offset of the input.
type SyntaxError struct {
	Offset int    // byte offset of the offending character
	Msg    string // what was wrong, in encoding/json's wording where it has one
}

func (e *SyntaxError) Error() string { return e.Msg }

func syntaxErr(off int, format string, args ...any) *SyntaxError {
	return &SyntaxError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// describe quotes a byte the way encoding/json does in its messages.
func describe(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

// Canonicalizer turns JSON values into canonical JSON. Its zero value is
// ready to use. It keeps scratch buffers between calls, so reuse one per
// goroutine.
type Canonicalizer struct {
	out     []byte
	members [][]member // one member stack per nesting depth
	keys    []byte
	tmp     []byte
}

type member struct {
	keyOff, keyLen int // decoded key in c.keys
	valOff, valEnd int // canonical value in c.out
}

// Value reads the JSON value that starts at or after src[pos] (leading
// whitespace is skipped) and returns its canonical form and the offset just
// past it. When the value is already canonical, canon aliases src;
// otherwise it aliases the Canonicalizer's buffer and is valid until the next
// call. At the end of the input Value returns end == len(src) and canon ==
// nil.
func (c *Canonicalizer) Value(src []byte, pos int) (canon []byte, start, end int, err error) {
	start = skipSpace(src, pos)
	if start == len(src) {
		return nil, start, start, nil
	}
	end, ok, err := check(src, start, 0)
	if err != nil {
		return nil, start, end, err
	}
	if ok {
		return src[start:end], start, end, nil
	}
	c.out = c.out[:0]
	c.keys = c.keys[:0]
	end, err = c.emit(src, start, 0)
	if err != nil {
		return nil, start, end, err
	}
	return c.out, start, end, nil
}

// Canonicalize returns the canonical form of the single JSON value in src,
// which may be surrounded by whitespace. The result aliases src when src is
// already canonical.
func Canonicalize(src []byte) ([]byte, error) {
	start := skipSpace(src, 0)
	if start == len(src) {
		return nil, syntaxErr(start, "unexpected end of JSON input")
	}
	end, ok, err := check(src, start, 0)
	if err != nil {
		return nil, err
	}
	out := src[start:end]
	if !ok {
		var c Canonicalizer
		if end, err = c.emit(src, start, 0); err != nil {
			return nil, err
		}
		out = c.out
	}
	if rest := skipSpace(src, end); rest != len(src) {
		return nil, syntaxErr(rest, "invalid character %s after top-level value", describe(src[rest]))
	}
	return out, nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(src []byte, i int) int {
	for i < len(src) && isSpace(src[i]) {
		i++
	}
	return i
}

// check validates the value at src[i] and reports whether it is canonical.
// It stops early (returning ok == false and no error) at the first
// non-canonical byte; emit then redoes the work and finds any syntax error.
func check(src []byte, i, depth int) (end int, ok bool, err error) {
	if i >= len(src) {
		return i, false, syntaxErr(i, "unexpected end of JSON input")
	}
	switch c := src[i]; {
	case c == '"':
		return checkString(src, i)
	case c == '{':
		if depth >= MaxDepth {
			return i, false, syntaxErr(i, "exceeded max depth")
		}
		i++
		if i < len(src) && src[i] == '}' {
			return i + 1, true, nil
		}
		prevStart, prevEnd := -1, -1
		for {
			if i >= len(src) || src[i] != '"' {
				return i, false, nil
			}
			kEnd, kOK, err := checkString(src, i)
			if err != nil || !kOK {
				return kEnd, false, err
			}
			key := src[i+1 : kEnd-1]
			if bytes.IndexByte(key, '\\') >= 0 {
				return i, false, nil // order of escaped keys needs decoding
			}
			if prevStart >= 0 && bytes.Compare(src[prevStart:prevEnd], key) >= 0 {
				return i, false, nil
			}
			prevStart, prevEnd = i+1, kEnd-1
			i = kEnd
			if i >= len(src) || src[i] != ':' {
				return i, false, nil
			}
			var vOK bool
			i, vOK, err = check(src, i+1, depth+1)
			if err != nil || !vOK {
				return i, false, err
			}
			if i >= len(src) {
				return i, false, nil
			}
			switch src[i] {
			case ',':
				i++
			case '}':
				return i + 1, true, nil
			default:
				return i, false, nil
			}
		}
	case c == '[':
		if depth >= MaxDepth {
			return i, false, syntaxErr(i, "exceeded max depth")
		}
		i++
		if i < len(src) && src[i] == ']' {
			return i + 1, true, nil
		}
		for {
			var vOK bool
			i, vOK, err = check(src, i, depth+1)
			if err != nil || !vOK {
				return i, false, err
			}
			if i >= len(src) {
				return i, false, nil
			}
			switch src[i] {
			case ',':
				i++
			case ']':
				return i + 1, true, nil
			default:
				return i, false, nil
			}
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return checkNumber(src, i)
	case c == 't':
		return checkLiteral(src, i, "true")
	case c == 'f':
		return checkLiteral(src, i, "false")
	case c == 'n':
		return checkLiteral(src, i, "null")
	default:
		return i, false, nil
	}
}

func checkLiteral(src []byte, i int, lit string) (int, bool, error) {
	if len(src)-i >= len(lit) && string(src[i:i+len(lit)]) == lit {
		return i + len(lit), true, nil
	}
	return i, false, nil
}

// checkNumber accepts numbers whose text is already what encoding/json writes
// for the float64 they denote.
func checkNumber(src []byte, i int) (int, bool, error) {
	start := i
	end, isInt, err := scanNumber(src, i)
	if err != nil {
		return end, false, err
	}
	digits := end - start
	if src[start] == '-' {
		digits--
	}
	if isInt && digits <= 15 {
		return end, true, nil
	}
	var buf [32]byte
	canon, err := appendNumber(buf[:0], src[start:end], start)
	if err != nil {
		return end, false, err
	}
	return end, bytes.Equal(canon, src[start:end]), nil
}

// scanNumber finds the end of the JSON number at src[i] and reports whether
// it has neither fraction nor exponent.
func scanNumber(src []byte, i int) (end int, isInt bool, err error) {
	isInt = true
	if src[i] == '-' {
		i++
	}
	if i >= len(src) {
		return i, false, syntaxErr(i, "unexpected end of JSON input")
	}
	switch c := src[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		for i < len(src) && src[i] >= '0' && src[i] <= '9' {
			i++
		}
	default:
		return i, false, syntaxErr(i, "invalid character %s in numeric literal", describe(c))
	}
	if i < len(src) && src[i] == '.' {
		isInt = false
		i++
		if i >= len(src) {
			return i, false, syntaxErr(i, "unexpected end of JSON input")
		}
		if src[i] < '0' || src[i] > '9' {
			return i, false, syntaxErr(i, "invalid character %s after decimal point in numeric literal", describe(src[i]))
		}
		for i < len(src) && src[i] >= '0' && src[i] <= '9' {
			i++
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		isInt = false
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if i >= len(src) {
			return i, false, syntaxErr(i, "unexpected end of JSON input")
		}
		if src[i] < '0' || src[i] > '9' {
			return i, false, syntaxErr(i, "invalid character %s in exponent of numeric literal", describe(src[i]))
		}
		for i < len(src) && src[i] >= '0' && src[i] <= '9' {
			i++
		}
	}
	return i, isInt, nil
}

// emit writes the canonical form of the value at src[i] to c.out.
func (c *Canonicalizer) emit(src []byte, i, depth int) (int, error) {
	i = skipSpace(src, i)
	if i >= len(src) {
		return i, syntaxErr(i, "unexpected end of JSON input")
	}
	switch ch := src[i]; {
	case ch == '"':
		start := len(c.tmp)
		end, err := unquote(&c.tmp, src, i)
		if err != nil {
			return end, err
		}
		c.out = AppendString(c.out, c.tmp[start:])
		c.tmp = c.tmp[:start]
		return end, nil
	case ch == '{':
		return c.emitObject(src, i, depth)
	case ch == '[':
		if depth >= MaxDepth {
			return i, syntaxErr(i, "exceeded max depth")
		}
		c.out = append(c.out, '[')
		i = skipSpace(src, i+1)
		if i < len(src) && src[i] == ']' {
			c.out = append(c.out, ']')
			return i + 1, nil
		}
		for {
			var err error
			if i, err = c.emit(src, i, depth+1); err != nil {
				return i, err
			}
			i = skipSpace(src, i)
			if i >= len(src) {
				return i, syntaxErr(i, "unexpected end of JSON input")
			}
			switch src[i] {
			case ',':
				c.out = append(c.out, ',')
				i++
			case ']':
				c.out = append(c.out, ']')
				return i + 1, nil
			default:
				return i, syntaxErr(i, "invalid character %s after array element", describe(src[i]))
			}
		}
	case ch == '-' || (ch >= '0' && ch <= '9'):
		end, _, err := scanNumber(src, i)
		if err != nil {
			return end, err
		}
		c.out, err = appendNumber(c.out, src[i:end], i)
		return end, err
	case ch == 't' || ch == 'f' || ch == 'n':
		lit := "null"
		if ch == 't' {
			lit = "true"
		} else if ch == 'f' {
			lit = "false"
		}
		for k := 0; k < len(lit); k++ {
			if i+k >= len(src) {
				return i + k, syntaxErr(i+k, "unexpected end of JSON input")
			}
			if src[i+k] != lit[k] {
				return i + k, syntaxErr(i+k, "invalid character %s in literal %s (expecting %s)", describe(src[i+k]), lit, describe(lit[k]))
			}
		}
		c.out = append(c.out, lit...)
		return i + len(lit), nil
	default:
		return i, syntaxErr(i, "invalid character %s looking for beginning of value", describe(ch))
	}
}

func (c *Canonicalizer) emitObject(src []byte, i, depth int) (int, error) {
	if depth >= MaxDepth {
		return i, syntaxErr(i, "exceeded max depth")
	}
	for len(c.members) <= depth {
		c.members = append(c.members, nil)
	}
	ms := c.members[depth][:0]
	objStart := len(c.out)
	keysStart := len(c.keys)
	i = skipSpace(src, i+1)
	if i < len(src) && src[i] == '}' {
		c.out = append(c.out, '{', '}')
		return i + 1, nil
	}
	for {
		if i >= len(src) {
			return i, syntaxErr(i, "unexpected end of JSON input")
		}
		if src[i] != '"' {
			return i, syntaxErr(i, "invalid character %s looking for beginning of object key string", describe(src[i]))
		}
		keyOff := len(c.keys)
		end, err := unquote(&c.keys, src, i)
		if err != nil {
			return end, err
		}
		i = skipSpace(src, end)
		if i >= len(src) {
			return i, syntaxErr(i, "unexpected end of JSON input")
		}
		if src[i] != ':' {
			return i, syntaxErr(i, "invalid character %s after object key", describe(src[i]))
		}
		valOff := len(c.out)
		if i, err = c.emit(src, i+1, depth+1); err != nil {
			return i, err
		}
		ms = append(ms, member{keyOff: keyOff, keyLen: len(c.keys) - keyOff, valOff: valOff, valEnd: len(c.out)})
		i = skipSpace(src, i)
		if i >= len(src) {
			return i, syntaxErr(i, "unexpected end of JSON input")
		}
		if src[i] == ',' {
			i = skipSpace(src, i+1)
			continue
		}
		if src[i] != '}' {
			return i, syntaxErr(i, "invalid character %s after object key:value pair", describe(src[i]))
		}
		i++
		break
	}
	key := func(m member) []byte { return c.keys[m.keyOff : m.keyOff+m.keyLen] }
	slices.SortStableFunc(ms, func(a, b member) int { return bytes.Compare(key(a), key(b)) })
	tmpStart := len(c.tmp)
	c.tmp = append(c.tmp, '{')
	first := true
	for k, m := range ms {
		if k+1 < len(ms) && bytes.Equal(key(m), key(ms[k+1])) {
			continue // a later duplicate wins
		}
		if !first {
			c.tmp = append(c.tmp, ',')
		}
		first = false
		c.tmp = AppendString(c.tmp, key(m))
		c.tmp = append(c.tmp, ':')
		c.tmp = append(c.tmp, c.out[m.valOff:m.valEnd]...)
	}
	c.tmp = append(c.tmp, '}')
	c.out = append(c.out[:objStart], c.tmp[tmpStart:]...)
	c.tmp = c.tmp[:tmpStart]
	c.keys = c.keys[:keysStart]
	c.members[depth] = ms[:0]
	return i, nil
}
