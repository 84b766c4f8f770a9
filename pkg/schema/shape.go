package schema

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
)

// placeholder replaces every non-empty string that is not a literal of
// schema.cue. The schema constrains strings only by type, by != "" and by
// equality with its own literals, so every such string gets the same
// verdict as the placeholder. New refuses a schema that uses it as a
// literal.
const placeholder = "s"

// keyPlaceholderPrefix starts the anonymous keys that replace object keys
// that are not labels of schema.cue. New refuses a schema with a label that
// starts with it.
const keyPlaceholderPrefix = "~"

// intShape and floatShape stand for every integer literal and every other
// number: CUE types the first int, the second float.
const (
	intShape   = "0"
	floatShape = "0.5"
)

// errSyntax reports bytes that the shape scanner cannot read as JSON.
var errSyntax = errors.New("invalid JSON")

// maxDepth is the deepest nesting of lists and objects the shaper accepts,
// the same limit as encoding/json's: canonical JSON never exceeds it, and
// deeper input would exhaust the stack of a recursive reader (CUE's too).
const maxDepth = 10000

// shapeDepth is the nesting, from the root of a part, at which shapes
// stop: a value nested deeper is shaped as {} or [], whatever it holds.
// schema.cue constrains nothing that deep (at most shapeDepth/2 below a
// part's root: TestSchemaDepth), the recursion of #Constraint aside,
// which is checked by parts (constraint.go), so such a value can only meet
// _ or a closed struct that refuses it whatever it holds. CUE takes
// seconds to evaluate a value nested thousands deep, and a catalog can
// nest values 10000 deep.
const shapeDepth = 32

// errTooDeep reports input nested deeper than maxDepth.
var errTooDeep = errors.New("invalid JSON: exceeded max depth")

// dedupMapAt is the number of distinct element shapes of one list above
// which duplicates are found with a map instead of a linear search.
const dedupMapAt = 32

// shaper computes shapes. A shaper is not safe for concurrent use; Checker
// keeps them in a pool.
type shaper struct {
	voc *vocabulary
	// depth is the nesting depth of the value being shaped.
	depth int
	// spans holds, for every list being shaped (nested lists stack up),
	// the positions in the output of its distinct element shapes.
	spans []span
	// sortBuf and order are scratch space for reordering list elements.
	sortBuf []byte
	order   []span
	// side and sideSpans stack up, for every object being shaped, the
	// distinct value shapes of its anonymized keys.
	side      []byte
	sideSpans []span
}

type span struct{ start, end int }

// value appends the shape of the JSON value at src[i:] (after optional
// whitespace) to dst and returns the extended dst and the index just past
// the value.
func (s *shaper) value(dst, src []byte, i int) ([]byte, int, error) {
	i = skipWS(src, i)
	if i >= len(src) {
		return dst, i, errSyntax
	}
	switch c := src[i]; {
	case c == '"':
		return s.str(dst, src, i)
	case c == '{' || c == '[':
		if s.depth >= maxDepth {
			return dst, i, errTooDeep
		}
		if s.depth >= shapeDepth {
			end, err := skipValueLimit(src, i, maxDepth-s.depth)
			if err != nil {
				return dst, end, err
			}
			if c == '{' {
				return append(dst, "{}"...), end, nil
			}
			return append(dst, "[]"...), end, nil
		}
		s.depth++
		var err error
		if c == '{' {
			dst, i, err = s.object(dst, src, i)
		} else {
			dst, i, err = s.list(dst, src, i)
		}
		s.depth--
		return dst, i, err
	case c == 't':
		return word(dst, src, i, "true")
	case c == 'f':
		return word(dst, src, i, "false")
	case c == 'n':
		return word(dst, src, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		j := i + 1
		integer := true
		for j < len(src) && isNumberByte(src[j]) {
			if src[j] < '0' || src[j] > '9' {
				integer = false
			}
			j++
		}
		// schema.cue has no number literals and no bounds (New refuses
		// them): a number only meets type constraints, under which every
		// integer literal behaves as 0 and every other number as 0.5.
		if integer {
			return append(dst, intShape...), j, nil
		}
		return append(dst, floatShape...), j, nil
	}
	return dst, i, errSyntax
}

func isNumberByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

func word(dst, src []byte, i int, w string) ([]byte, int, error) {
	if len(src)-i < len(w) || string(src[i:i+len(w)]) != w {
		return dst, i, errSyntax
	}
	return append(dst, w...), i + len(w), nil
}

// afterItem reads what follows an array element or an object member at
// i: a comma, more follow, or closing, the end (done); next is the
// position after either.
func afterItem(src []byte, i int, closing byte) (next int, done bool, err error) {
	i = skipWS(src, i)
	if i >= len(src) {
		return i, false, errSyntax
	}
	switch src[i] {
	case ',':
		return i + 1, false, nil
	case closing:
		return i + 1, true, nil
	}
	return i, false, errSyntax
}

func skipWS(src []byte, i int) int {
	for i < len(src) {
		switch src[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd returns the index just past the JSON string that starts at
// src[i] (a quote). It finds quotes with bytes.IndexByte, so long strings
// cost a memory scan and nothing else.
func stringEnd(src []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(src[j:], '"')
		if k < 0 {
			return len(src), errSyntax
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && src[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
}

// skipValue returns the index just past the JSON value at src[i:] (after
// optional whitespace), looking only at brackets and strings: the caller
// knows the input is JSON and needs no shape of the value.
func skipValue(src []byte, i int) (int, error) { return skipValueLimit(src, i, maxDepth) }

// skipValueLimit is skipValue for a value that may nest limit deep.
func skipValueLimit(src []byte, i, limit int) (int, error) {
	i = skipWS(src, i)
	depth := 0
	for i < len(src) {
		switch c := src[i]; c {
		case '"':
			end, err := stringEnd(src, i)
			if err != nil {
				return end, err
			}
			i = end
		case '{', '[':
			if depth >= limit {
				return i, errTooDeep
			}
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return i, nil // the end of a scalar
			}
			depth--
			i++
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i, nil
			}
			i++
		default:
			i++
			continue
		}
		if depth == 0 {
			return i, nil
		}
	}
	if depth != 0 {
		return i, errSyntax
	}
	return i, nil
}

// str appends the shape of the string at src[i]: "" when empty, the string
// itself when it is a schema literal, the placeholder otherwise.
func (s *shaper) str(dst, src []byte, i int) ([]byte, int, error) {
	end, err := stringEnd(src, i)
	if err != nil {
		return dst, end, err
	}
	if end-i == 2 {
		return append(dst, `""`...), end, nil
	}
	if lit, ok := s.voc.lits.match(src, i, end); ok {
		return append(append(append(dst, '"'), lit...), '"'), end, nil
	}
	return append(dst, `"`+placeholder+`"`...), end, nil
}

// object appends the shape of the object at src[i]. Keys that are labels of
// schema.cue are kept, each followed by its value's shape. Other keys can
// only meet a closed struct (which refuses any of them), an open one or a
// pattern constraint [string]: T (which treat all of them alike), so they
// are replaced by anonymous keys, one per distinct value shape, in order of
// value shape: objects that differ only in such keys share a shape.
func (s *shaper) object(dst, src []byte, i int) ([]byte, int, error) {
	dst = append(dst, '{')
	i = skipWS(src, i+1)
	if i < len(src) && src[i] == '}' {
		return append(dst, '}'), i + 1, nil
	}
	sideBase, spanBase := len(s.side), len(s.sideSpans)
	defer func() {
		s.side = s.side[:sideBase]
		s.sideSpans = s.sideSpans[:spanBase]
	}()
	var seen map[string]struct{}
	first := true
	for {
		i = skipWS(src, i)
		if i >= len(src) || src[i] != '"' {
			return dst, i, errSyntax
		}
		keyStart := i
		end, err := stringEnd(src, i)
		if err != nil {
			return dst, end, err
		}
		_, known := s.voc.labels.match(src, keyStart, end)
		i = skipWS(src, end)
		if i >= len(src) || src[i] != ':' {
			return dst, i, errSyntax
		}
		if known {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(append(dst, src[keyStart:end]...), ':')
			if dst, i, err = s.value(dst, src, i+1); err != nil {
				return dst, i, err
			}
		} else {
			mark := len(dst)
			if dst, i, err = s.value(dst, src, i+1); err != nil {
				return dst, i, err
			}
			v := dst[mark:]
			dup := false
			if seen != nil {
				_, dup = seen[string(v)]
			} else {
				for _, sp := range s.sideSpans[spanBase:] {
					if bytes.Equal(s.side[sp.start:sp.end], v) {
						dup = true
						break
					}
				}
			}
			if !dup {
				start := len(s.side)
				s.side = append(s.side, v...)
				s.sideSpans = append(s.sideSpans, span{start, len(s.side)})
				if seen != nil {
					seen[string(v)] = struct{}{}
				} else if len(s.sideSpans)-spanBase > dedupMapAt {
					seen = make(map[string]struct{}, 2*dedupMapAt)
					for _, sp := range s.sideSpans[spanBase:] {
						seen[string(s.side[sp.start:sp.end])] = struct{}{}
					}
				}
			}
			dst = dst[:mark]
		}
		i = skipWS(src, i)
		if i >= len(src) {
			return dst, i, errSyntax
		}
		switch src[i] {
		case ',':
			i++
			continue
		case '}':
			i++
		default:
			return dst, i, errSyntax
		}
		break
	}
	anon := s.sideSpans[spanBase:]
	slices.SortFunc(anon, func(a, b span) int { return bytes.Compare(s.side[a.start:a.end], s.side[b.start:b.end]) })
	for n, sp := range anon {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, '"')
		dst = append(dst, keyPlaceholderPrefix...)
		dst = strconv.AppendInt(dst, int64(n), 10)
		dst = append(dst, '"', ':')
		dst = append(dst, s.side[sp.start:sp.end]...)
	}
	return append(dst, '}'), i, nil
}

// list appends the shape of the list at src[i]: the distinct shapes of its
// elements, sorted. The schema has no length or position constraints, so a
// list is valid exactly when each distinct element shape is.
func (s *shaper) list(dst, src []byte, i int) ([]byte, int, error) {
	dst = append(dst, '[')
	i = skipWS(src, i+1)
	if i < len(src) && src[i] == ']' {
		return append(dst, ']'), i + 1, nil
	}
	base := len(s.spans)
	defer func() { s.spans = s.spans[:base] }()
	var seen map[string]struct{}
	for {
		before := len(dst)
		if len(s.spans) > base {
			dst = append(dst, ',')
		}
		start := len(dst)
		var err error
		dst, i, err = s.value(dst, src, i)
		if err != nil {
			return dst, i, err
		}
		elem := dst[start:]
		dup := false
		if seen != nil {
			_, dup = seen[string(elem)]
		} else {
			for _, sp := range s.spans[base:] {
				if bytes.Equal(dst[sp.start:sp.end], elem) {
					dup = true
					break
				}
			}
		}
		if dup {
			dst = dst[:before]
		} else {
			s.spans = append(s.spans, span{start, len(dst)})
			if seen != nil {
				seen[string(elem)] = struct{}{}
			} else if len(s.spans)-base > dedupMapAt {
				seen = make(map[string]struct{}, 2*dedupMapAt)
				for _, sp := range s.spans[base:] {
					seen[string(dst[sp.start:sp.end])] = struct{}{}
				}
			}
		}
		i = skipWS(src, i)
		if i >= len(src) {
			return dst, i, errSyntax
		}
		switch src[i] {
		case ',':
			i++
		case ']':
			dst = s.sortElems(dst, s.spans[base:])
			return append(dst, ']'), i + 1, nil
		default:
			return dst, i, errSyntax
		}
	}
}

// sortElems reorders the comma-separated element shapes at spans (the tail
// of dst) by their bytes, so that lists holding the same distinct shapes in
// another order get the same shape.
func (s *shaper) sortElems(dst []byte, spans []span) []byte {
	less := func(a, b span) bool { return bytes.Compare(dst[a.start:a.end], dst[b.start:b.end]) < 0 }
	sorted := true
	for k := 1; k < len(spans); k++ {
		if less(spans[k], spans[k-1]) {
			sorted = false
			break
		}
	}
	if sorted {
		return dst
	}
	order := append(s.order[:0], spans...)
	slices.SortFunc(order, func(a, b span) int { return bytes.Compare(dst[a.start:a.end], dst[b.start:b.end]) })
	s.order = order
	from := spans[0].start
	buf := s.sortBuf[:0]
	for k, sp := range order {
		if k > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, dst[sp.start:sp.end]...)
	}
	s.sortBuf = buf
	return append(dst[:from], buf...)
}

// realDepth is the nesting at which values given to CUE are cut to {} or
// [] (cutDeep). It is deeper than anything schema.cue constrains
// (shapeDepth), by more than the levels CUE can quote of a value in a
// message before maxArgument cuts it (each level takes a byte at least),
// so CUE's violations are the same, and CUE evaluates a few hundred
// levels at most.
const realDepth = shapeDepth + maxArgument + 32

// cutDeep returns data (JSON) with every value nested deeper than limit
// written as {} or []. It returns data itself when nothing is that deep,
// or when data does not read as JSON.
func cutDeep(data []byte, limit int) []byte {
	var out []byte
	from, depth := 0, 0
	for i := 0; i < len(data); {
		switch c := data[i]; c {
		case '"':
			end, err := stringEnd(data, i)
			if err != nil {
				return data
			}
			i = end
		case '{', '[':
			if depth < limit {
				depth++
				i++
				continue
			}
			end, err := skipValueLimit(data, i, maxDepth)
			if err != nil {
				return data
			}
			out = append(out, data[from:i]...)
			if c == '{' {
				out = append(out, '{', '}')
			} else {
				out = append(out, '[', ']')
			}
			from, i = end, end
		case '}', ']':
			depth--
			i++
		default:
			i++
		}
	}
	if out == nil {
		return data
	}
	return append(out, data[from:]...)
}
