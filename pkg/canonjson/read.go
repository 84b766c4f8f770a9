package canonjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// The helpers below read canonical JSON (no whitespace, well formed) without
// decoding it. On other input they never panic; they may return nonsense.

// SkipString returns the offset just past the string that starts at
// data[i] (a quote).
func SkipString(data []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return len(data)
		}
		j += k
		// An escaped quote has an odd number of backslashes before it.
		n := 0
		for p := j - 1; p > i && data[p] == '\\'; p-- {
			n++
		}
		j++
		if n%2 == 0 {
			return j
		}
	}
}

// SkipValue returns the offset just past the value that starts at data[i].
func SkipValue(data []byte, i int) int {
	if i >= len(data) {
		return len(data)
	}
	switch data[i] {
	case '"':
		return SkipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				i = SkipString(data, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(data)
	default:
		for i < len(data) {
			switch data[i] {
			case ',', '}', ']', ':':
				return i
			}
			i++
		}
		return i
	}
}

// ForEachMember calls fn with the raw key (the bytes between the quotes,
// escapes intact) and the value of each member of the object obj, in order,
// until fn returns false. It does nothing when obj is not an object.
func ForEachMember(obj []byte, fn func(key, val []byte) bool) {
	if len(obj) < 2 || obj[0] != '{' {
		return
	}
	i := 1
	for i < len(obj) && obj[i] == '"' {
		kEnd := SkipString(obj, i)
		if kEnd >= len(obj) || obj[kEnd] != ':' {
			return
		}
		key := obj[i+1 : kEnd-1]
		vStart := kEnd + 1
		vEnd := SkipValue(obj, vStart)
		if !fn(key, obj[vStart:vEnd]) {
			return
		}
		if vEnd >= len(obj) || obj[vEnd] != ',' {
			return
		}
		i = vEnd + 1
	}
}

// ForEachElement calls fn with each element of the array arr, in order,
// until fn returns false. It does nothing when arr is not an array.
func ForEachElement(arr []byte, fn func(val []byte) bool) {
	if len(arr) < 2 || arr[0] != '[' || arr[1] == ']' {
		return
	}
	i := 1
	for i < len(arr) {
		end := SkipValue(arr, i)
		if !fn(arr[i:end]) {
			return
		}
		if end >= len(arr) || arr[end] != ',' {
			return
		}
		i = end + 1
	}
}

// Kind is the JSON type of a value, named by its first byte: '"' string,
// '{' object, '[' array, 't'/'f' boolean, 'n' null, '0' number, 0 nothing.
func Kind(val []byte) byte {
	if len(val) == 0 {
		return 0
	}
	switch c := val[0]; c {
	case '"', '{', '[', 't', 'f', 'n':
		return c
	default:
		return '0'
	}
}

// TypeName names the JSON type of val as encoding/json does in its
// "cannot unmarshal X into ..." messages.
func TypeName(val []byte) string {
	switch Kind(val) {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	case '0':
		return "number"
	}
	return "nothing"
}

// DescribeValue names the JSON type of a value decoded by encoding/json or
// go-yaml, with an article, for messages: "a string", "an array", "null".
func DescribeValue(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number, int, int64, uint64, float64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// String decodes the string value val. ok is false when val is not a string.
func String(val []byte) (s string, ok bool) {
	if len(val) < 2 || val[0] != '"' {
		return "", false
	}
	body := val[1 : len(val)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body), true
	}
	var b []byte
	if _, err := unquote(&b, val, 0); err != nil {
		return "", false
	}
	return string(b), true
}

// Key decodes a raw object key (the bytes between the quotes, as
// ForEachMember gives it).
func Key(raw []byte) (string, bool) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), true
	}
	q := make([]byte, 0, len(raw)+2)
	q = append(q, '"')
	q = append(q, raw...)
	return String(append(q, '"'))
}

// RawString returns the bytes of the string value val without its quotes,
// decoding escapes only when there are any. ok is false when val is not a
// string.
func RawString(val []byte) (b []byte, ok bool) {
	if len(val) < 2 || val[0] != '"' {
		return nil, false
	}
	body := val[1 : len(val)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return body, true
	}
	if _, err := unquote(&b, val, 0); err != nil {
		return nil, false
	}
	return b, true
}

// KeyFold reports whether the decoded raw key equals name under Unicode
// simple case folding, which is how encoding/json matches object keys to
// struct fields.
func KeyFold(key []byte, name string) bool {
	if len(key) == len(name) && asciiEqualFold(key, name) {
		return true
	}
	for _, c := range key {
		if c >= utf8.RuneSelf || c == '\\' {
			k, ok := String(append(append([]byte{'"'}, key...), '"'))
			return ok && bytes.EqualFold([]byte(k), []byte(name))
		}
	}
	return false
}

func asciiEqualFold(a []byte, b string) bool {
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x|0x20 != y|0x20 || x|0x20 < 'a' || x|0x20 > 'z' {
			return false
		}
	}
	return true
}

// Reader walks canonical JSON token by token, so that every byte is looked
// at once: a caller either decodes a value or skips it, and the walk goes
// on from where that left off. A Reader never panics; on malformed input
// its methods return false or empty results.
type Reader struct {
	data []byte
	pos  int
}

// NewReader returns a Reader at the start of data.
func NewReader(data []byte) *Reader { return &Reader{data: data} }

// Pos is the reader's offset in its data.
func (r *Reader) Pos() int { return r.pos }

// Peek returns the Kind of the next value.
func (r *Reader) Peek() byte {
	if r.pos >= len(r.data) {
		return 0
	}
	return Kind(r.data[r.pos:])
}

// Skip consumes the next value and returns its bytes.
func (r *Reader) Skip() []byte {
	start := r.pos
	r.pos = SkipValue(r.data, r.pos)
	return r.data[start:r.pos]
}

// Object consumes the start of an object. It reports false (consuming
// nothing) when the next value is not an object.
func (r *Reader) Object() bool {
	if r.pos < len(r.data) && r.data[r.pos] == '{' {
		r.pos++
		return true
	}
	return false
}

// Key returns the raw key of the next member of the current object and
// positions r at its value, or returns false at the object's end (which it
// consumes). Call it after Object and after consuming each value.
func (r *Reader) Key() ([]byte, bool) {
	if r.pos < len(r.data) && r.data[r.pos] == ',' {
		r.pos++
	}
	if r.pos >= len(r.data) || r.data[r.pos] != '"' {
		if r.pos < len(r.data) && r.data[r.pos] == '}' {
			r.pos++
		}
		return nil, false
	}
	end := SkipString(r.data, r.pos)
	key := r.data[r.pos+1 : max(r.pos+1, end-1)]
	r.pos = end
	if r.pos < len(r.data) && r.data[r.pos] == ':' {
		r.pos++
	}
	return key, true
}

// Array consumes the start of an array. It reports false (consuming
// nothing) when the next value is not an array.
func (r *Reader) Array() bool {
	if r.pos < len(r.data) && r.data[r.pos] == '[' {
		r.pos++
		return true
	}
	return false
}

// Next reports whether the current array has another element, positioning
// r at it, or consumes the array's end and returns false. Call it after
// Array and after consuming each element.
func (r *Reader) Next() bool {
	if r.pos < len(r.data) && r.data[r.pos] == ',' {
		r.pos++
	}
	if r.pos >= len(r.data) {
		return false
	}
	if r.data[r.pos] == ']' {
		r.pos++
		return false
	}
	return true
}

// AppendTypeShape appends the type shape of the canonical value val: val
// with every string value emptied, numbers and literals kept, and repeated
// element shapes of an array kept once. Object keys are kept when known
// reports true (nil keeps them all); the others become "~", and repeated
// ~ members with the same value shape are kept once.
//
// Whether encoding/json can decode a value into a Go type with no
// content-sensitive strings (no []byte, times or custom decoders) depends
// only on this shape, provided known reports true for every key that
// matches a field name of the type (unknown keys are skipped in structs,
// and in maps only their values' shapes matter). So verdicts can be
// remembered by shape.
func AppendTypeShape(dst, val []byte, known func(key []byte) bool) []byte {
	r := Reader{data: val}
	return r.appendShape(dst, 0, known)
}

type span struct{ start, end int }

// dupOf reports whether dst[sp] equals one of the earlier spans.
func dupOf(dst []byte, earlier []span, sp span) bool {
	for _, e := range earlier {
		if e.end-e.start == sp.end-sp.start && bytes.Equal(dst[e.start:e.end], dst[sp.start:sp.end]) {
			return true
		}
	}
	return false
}

func (r *Reader) appendShape(dst []byte, depth int, known func([]byte) bool) []byte {
	if depth > MaxDepth {
		return append(dst, '!')
	}
	switch r.Peek() {
	case '"':
		r.Skip()
		return append(dst, '"', '"')
	case '{':
		r.Object()
		dst = append(dst, '{')
		first := true
		var unknown []span // value shapes of the ~ members written so far
		for {
			key, ok := r.Key()
			if !ok {
				break
			}
			mark := len(dst)
			if !first {
				dst = append(dst, ',')
			}
			if known == nil || known(key) {
				dst = append(dst, '"')
				dst = append(dst, key...)
				dst = append(dst, '"', ':')
				dst = r.appendShape(dst, depth+1, known)
				first = false
				continue
			}
			dst = append(dst, `"~":`...)
			sp := span{start: len(dst)}
			dst = r.appendShape(dst, depth+1, known)
			sp.end = len(dst)
			if dupOf(dst, unknown, sp) {
				dst = dst[:mark]
				continue
			}
			unknown = append(unknown, sp)
			first = false
		}
		return append(dst, '}')
	case '[':
		r.Array()
		dst = append(dst, '[')
		var seen []span
		for r.Next() {
			mark := len(dst)
			if len(seen) > 0 {
				dst = append(dst, ',')
			}
			sp := span{start: len(dst)}
			dst = r.appendShape(dst, depth+1, known)
			sp.end = len(dst)
			if dupOf(dst, seen, sp) {
				dst = dst[:mark]
				continue
			}
			seen = append(seen, sp)
		}
		return append(dst, ']')
	case 0:
		return dst
	default:
		return append(dst, r.Skip()...)
	}
}
