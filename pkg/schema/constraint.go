package schema

import (
	"bytes"
	"encoding/json"
)

// Nested constraints.
//
// An olm.constraint value is a #Constraint, and the constraints listed
// in its all, any and not (or none) are #Constraints too, as deep as the
// author nests them. CUE checks a value against #Constraint by trying
// each alternative of the disjunction with the whole value under it, so
// its cost grows much faster than the value (a 26 KB value nested 1000
// deep never finished), and when a constraint deep inside fails, every
// alternative of every constraint above it fails with it: CUE reports the
// failure at the top, or as "all is not a field", never where it is.
//
// So each constraint is checked on its own. A constraint's *cut* is the
// constraint with the lists of its nested constraints emptied
// (`"constraints":[]`, which #CompoundConstraint accepts); the cut of an
// olm.constraint property is the property with its value's lists emptied.
// A property is valid exactly when its cut and the cut of every
// constraint nested in it are: the lists are [...#Constraint], so a
// constraint is valid exactly when its cut is and every element of its
// lists is (the property's other fields cannot see into the lists). Each
// cut is shaped and memoized like any other part, so the check is linear
// in the value's size at any depth. A constraint that fails is reported
// at its own path, with the violations CUE gives for it alone: the cut of
// a constraint whose nested constraints are valid gets exactly the
// violations the whole constraint gets (the tests check this against the
// whole-blob evaluation), so nothing changes for a constraint that is
// checked whole today.

// nestedKeys are the members of a constraint whose value holds nested
// constraints (none is OLM's deprecated spelling of not).
var nestedKeys = [...]string{"all", "any", "not", "none"}

// maxNestedReported bounds how many failing nested constraints of one
// property are reported. A hostile value can nest thousands, each failing,
// and each path is as long as its depth.
const maxNestedReported = 20

// cstep is one level of nesting: .key.constraints[index].
type cstep struct {
	key   string
	index int
}

// constraintWalk walks the nested constraints of a constraint value in one
// pass, in post-order, so that each constraint's cut is known when it is
// visited. It uses the stack only as deep as the constraints nest, which
// the depth limit bounds.
type constraintWalk struct {
	src []byte
	// lists stacks up the spans of the nested-constraint lists of the
	// constraints being walked, in src order.
	lists []span
	// path is the nesting of the constraint being walked.
	path []cstep
	// cut is scratch space for a constraint's cut.
	cut []byte
	// depth counts the JSON nesting of the constraint being walked.
	depth int
	// visit, if set, is called for every nested constraint (not the
	// value itself), after the constraints nested in it, with its cut.
	// Returning false stops the visits (the walk goes on to its end).
	visit func(cut []byte) bool
	// start is the index in src of the constraint being visited.
	start int
	// stopped is set when visit stopped the walk.
	stopped bool
}

// reset prepares w to walk src.
func (w *constraintWalk) reset(src []byte, visit func([]byte) bool) {
	w.src = src
	w.lists = w.lists[:0]
	w.path = w.path[:0]
	w.depth = 0
	w.visit = visit
	w.stopped = false
}

// node walks the constraint at src[i] (after optional whitespace) and
// returns the index just past it; the spans of its nested lists are left
// on w.lists.
func (w *constraintWalk) node(i int) (int, error) {
	src := w.src
	i = skipWS(src, i)
	if i >= len(src) || src[i] != '{' {
		return skipValue(src, i)
	}
	return w.object(i, func(key []byte, j int) (int, error) {
		if src[j] != '{' || !isNestedKey(key) {
			return skipValue(src, j)
		}
		name := decodeKey(key)
		return w.object(j, func(key []byte, j int) (int, error) {
			if src[j] != '[' || !keyIs(key, "constraints") {
				return skipValue(src, j)
			}
			return w.list(j, name)
		})
	})
}

// object calls member for each member of the object at src[i] (a '{')
// with the key's span (quotes included) and the index of its value, and
// returns the index just past the object.
func (w *constraintWalk) object(i int, member func(key []byte, j int) (int, error)) (int, error) {
	src := w.src
	if w.depth >= maxDepth {
		return i, errTooDeep
	}
	w.depth++
	defer func() { w.depth-- }()
	i = skipWS(src, i+1)
	if i < len(src) && src[i] == '}' {
		return i + 1, nil
	}
	for {
		i = skipWS(src, i)
		if i >= len(src) || src[i] != '"' {
			return i, errSyntax
		}
		end, err := stringEnd(src, i)
		if err != nil {
			return end, err
		}
		key := src[i:end]
		i = skipWS(src, end)
		if i >= len(src) || src[i] != ':' {
			return i, errSyntax
		}
		i = skipWS(src, i+1)
		if i >= len(src) {
			return i, errSyntax
		}
		if i, err = member(key, i); err != nil {
			return i, err
		}
		var done bool
		if i, done, err = afterItem(src, i, '}'); err != nil || done {
			return i, err
		}
	}
}

// list walks the list of nested constraints at src[i] (a '['), the
// constraints member of key, and returns the index just past it.
func (w *constraintWalk) list(i int, key string) (int, error) {
	src := w.src
	if w.depth >= maxDepth {
		return i, errTooDeep
	}
	w.depth++
	defer func() { w.depth-- }()
	start := i
	i = skipWS(src, i+1)
	if i < len(src) && src[i] == ']' {
		w.lists = append(w.lists, span{start, i + 1})
		return i + 1, nil
	}
	for n := 0; ; n++ {
		i = skipWS(src, i)
		es := i
		base := len(w.lists)
		w.path = append(w.path, cstep{key, n})
		var err error
		if i, err = w.node(i); err != nil {
			return i, err
		}
		if w.visit != nil && !w.stopped {
			w.start = es
			w.cut = appendCut(w.cut[:0], src, es, i, w.lists[base:])
			w.stopped = !w.visit(w.cut)
		}
		w.lists = w.lists[:base]
		w.path = w.path[:len(w.path)-1]
		next, done, err := afterItem(src, i, ']')
		if err != nil {
			return next, err
		}
		if done {
			w.lists = append(w.lists, span{start, next})
			return next, nil
		}
		i = next
	}
}

// appendCut appends src[start:end] to dst with each of the lists (spans
// inside it, in order) written as [].
func appendCut(dst, src []byte, start, end int, lists []span) []byte {
	from := start
	for _, l := range lists {
		dst = append(dst, src[from:l.start]...)
		dst = append(dst, '[', ']')
		from = l.end
	}
	return append(dst, src[from:end]...)
}

// constraintValue returns the index of the value of the property object
// src[start:end] when it is an olm.constraint property (its type is the
// string "olm.constraint"), and ok false otherwise or when the object
// repeats type or value (which canonical JSON never does).
func constraintValue(src []byte, start, end int) (value int, ok bool) {
	w := constraintWalk{src: src[:end]}
	value = -1
	isConstraint, types, values := false, 0, 0
	_, err := w.object(skipWS(src, start), func(key []byte, j int) (int, error) {
		switch {
		case keyIs(key, "type"):
			types++
			e, err := skipValue(src, j)
			if err == nil && src[j] == '"' {
				isConstraint = stringIs(src[j:e], "olm.constraint")
			}
			return e, err
		case keyIs(key, "value"):
			values++
			value = j
		}
		return skipValue(src, j)
	})
	return value, err == nil && isConstraint && types == 1 && values == 1
}

// isNestedKey reports whether the key (quotes included) is one of
// nestedKeys.
func isNestedKey(key []byte) bool {
	for _, k := range nestedKeys {
		if keyIs(key, k) {
			return true
		}
	}
	return false
}

// keyIs reports whether the JSON string key (quotes included) decodes to
// name.
func keyIs(key []byte, name string) bool { return stringIs(key, name) }

// stringIs reports whether the JSON string s (quotes included) decodes to
// name.
func stringIs(s []byte, name string) bool {
	raw := s[1 : len(s)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == name
	}
	if len(raw) > 6*len(name) {
		return false
	}
	var dec string
	return json.Unmarshal(s, &dec) == nil && dec == name
}

// decodeKey returns the text of the JSON string key (quotes included),
// one of the plain nestedKeys.
func decodeKey(key []byte) string {
	for _, k := range nestedKeys {
		if stringIs(key, k) {
			return k
		}
	}
	return ""
}

// cutConstraint returns the cut of the constraint node (JSON).
func cutConstraint(node []byte) ([]byte, bool) {
	var w constraintWalk
	w.reset(node, nil)
	start := skipWS(node, 0)
	end, err := w.node(start)
	if err != nil {
		return nil, false
	}
	return appendCut(nil, node, start, end, w.lists), true
}

// cutConstraints returns blob with each of its olm.constraint properties
// cut.
func cutConstraints(blob []byte) []byte {
	var w, elems constraintWalk
	w.reset(blob, nil)
	elems.reset(blob, nil)
	var lists []span
	i := skipWS(blob, 0)
	if i >= len(blob) || blob[i] != '{' {
		return blob
	}
	_, err := elems.object(i, func(key []byte, j int) (int, error) {
		if blob[j] != '[' || !keyIs(key, "properties") {
			return skipValue(blob, j)
		}
		j = skipWS(blob, j+1)
		if j < len(blob) && blob[j] == ']' {
			return j + 1, nil
		}
		for {
			start := skipWS(blob, j)
			end, err := skipValue(blob, start)
			if err != nil {
				return end, err
			}
			if value, ok := constraintValue(blob, start, end); ok {
				w.lists = w.lists[:0]
				if _, err := w.node(value); err != nil {
					return end, err
				}
				lists = append(lists, w.lists...)
			}
			next, done, err := afterItem(blob, end, ']')
			if err != nil || done {
				return next, err
			}
			j = next
		}
	})
	if err != nil || len(lists) == 0 {
		return blob
	}
	return appendCut(make([]byte, 0, len(blob)), blob, 0, len(blob), lists)
}
