package schema

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// checkState is the per-call scratch space of Check, pooled.
type checkState struct {
	shaper   shaper
	skeleton []byte // kind byte + skeleton shape
	elem     []byte // kind byte + element shape
	lists    []splitList
	failed   []failedElem
	// walk, cut and cutShape serve olm.constraint properties
	// (constraint.go).
	walk     constraintWalk
	cut      []byte
	cutShape []byte
}

// splitList is a top-level list split off the skeleton, with its position in
// the blob so that explain can rebuild the blob around failing elements.
type splitList struct {
	field      listField
	start, end int
	count      int // number of elements
}

// failedElem is a list element whose shape failed.
type failedElem struct {
	list       int // index into checkState.lists
	index      int // element index in the list
	start, end int
	// constraint: the element is an olm.constraint property, checked by
	// parts (constraint.go).
	constraint bool
}

var statePool = sync.Pool{New: func() any { return new(checkState) }}

// Check validates one blob. blob is canonical JSON: compact, object keys
// sorted by byte order, no duplicate keys (exactly what encoding/json
// produces when it marshals a map[string]any decoded from the blob, with
// SetEscapeHTML(false)). schemaName is the blob's schema value;
// olm.package, olm.channel, olm.bundle and olm.deprecations blobs are
// checked against their definition unified with _Meta, anything else
// against _Meta only.
//
// The result is nil for a valid blob; otherwise the violations are sorted by
// path (list indexes in numeric order), then message.
func (c *Checker) Check(schemaName string, blob []byte) []Violation {
	k := blobKind(schemaName)
	st := statePool.Get().(*checkState)
	defer func() {
		st.shaper.voc = nil
		statePool.Put(st)
	}()
	st.shaper.voc = &c.voc
	st.lists = st.lists[:0]
	st.failed = st.failed[:0]

	st.shaper.depth = 0
	if k == kindDeprecations && bytes.Contains(blob, constraintLiteral) {
		// Properties are not a field of olm.deprecations blobs, so
		// they are not split off and checked by parts; _Meta still
		// types them, and CUE evaluates them whole, so their
		// olm.constraint values are cut. Nested constraints are not
		// checked there: CUE reports none (the property is not
		// allowed at all).
		blob = cutConstraints(blob)
	}
	skeletonOK, err := c.scan(st, k, blob)
	if errors.Is(err, errTooDeep) {
		return []Violation{{Message: err.Error()}}
	}
	if err != nil {
		// Not the JSON object Check expects: let CUE say what is wrong.
		return c.reference(k, blob)
	}
	if skeletonOK && len(st.failed) == 0 {
		return nil
	}
	return c.explain(st, k, blob)
}

// scan computes the skeleton shape of blob and the shape of each element of
// its split lists, looks their verdicts up (evaluating CUE for new shapes),
// records failing elements in st.failed and reports the skeleton's verdict.
func (c *Checker) scan(st *checkState, k kind, src []byte) (skeletonOK bool, err error) {
	dst := append(st.skeleton[:0], byte(k))
	defer func() { st.skeleton = dst }()
	i := skipWS(src, 0)
	if i >= len(src) || src[i] != '{' {
		return false, errSyntax
	}
	dst = append(dst, '{')
	i = skipWS(src, i+1)
	if i < len(src) && src[i] == '}' {
		dst = append(dst, '}')
		i++
	} else {
		first := true
		for {
			i = skipWS(src, i)
			if i >= len(src) || src[i] != '"' {
				return false, errSyntax
			}
			end, err := stringEnd(src, i)
			if err != nil {
				return false, err
			}
			key := src[i+1 : end-1]
			keyStart := i
			i = skipWS(src, end)
			if i >= len(src) || src[i] != ':' {
				return false, errSyntax
			}
			i = skipWS(src, i+1)
			if k == kindMeta && !c.metaLabels.has(key) {
				// _Meta is open: a field it does not name is allowed
				// whatever its value, so it has no part in the shape.
				if i, err = skipValue(src, i); err != nil {
					return false, err
				}
			} else {
				if !first {
					dst = append(dst, ',')
				}
				first = false
				dst = append(dst, src[keyStart:end]...)
				dst = append(dst, ':')
				if dst, i, err = c.scanField(st, k, key, dst, src, i); err != nil {
					return false, err
				}
			}
			i = skipWS(src, i)
			if i >= len(src) {
				return false, errSyntax
			}
			if src[i] == ',' {
				i++
				continue
			}
			if src[i] != '}' {
				return false, errSyntax
			}
			dst = append(dst, '}')
			i++
			break
		}
	}
	if skipWS(src, i) != len(src) {
		return false, errSyntax
	}
	return c.verdict(k, dst), nil
}

// scanField appends the shape of the top-level field value at src[i] to
// dst, splitting it off as a list when the blob's kind says so, and
// returns the extended dst and the index just past the value.
func (c *Checker) scanField(st *checkState, k kind, key, dst, src []byte, i int) ([]byte, int, error) {
	if i < len(src) && src[i] == '[' {
		for _, lf := range blobLists[k] {
			if string(key) == lf.name {
				i, err := c.scanList(st, lf, src, i)
				return append(dst, "[]"...), i, err
			}
		}
	}
	return st.shaper.value(dst, src, i)
}

// scanList checks the shape of every element of the list at src[i] against
// lf.elem and returns the index just past the list.
func (c *Checker) scanList(st *checkState, lf listField, src []byte, i int) (int, error) {
	start := i
	li := len(st.lists)
	st.lists = append(st.lists, splitList{field: lf, start: start})
	i = skipWS(src, i+1)
	if i < len(src) && src[i] == ']' {
		st.lists[li].end = i + 1
		return i + 1, nil
	}
	for n := 0; ; n++ {
		i = skipWS(src, i)
		es := i
		var err error
		st.elem, i, err = st.shaper.value(append(st.elem[:0], byte(lf.elem)), src, i)
		if err != nil {
			return i, err
		}
		var valid, constraint bool
		if lf.elem == kindProperty && bytes.Contains(st.elem, constraintLiteral) {
			valid, constraint = c.constraintProperty(st, src, es, i)
		}
		if !constraint {
			valid = c.verdict(lf.elem, st.elem)
		}
		if !valid {
			st.failed = append(st.failed, failedElem{list: li, index: n, start: es, end: i, constraint: constraint})
		}
		i = skipWS(src, i)
		if i >= len(src) {
			return i, errSyntax
		}
		switch src[i] {
		case ',':
			i++
		case ']':
			st.lists[li].end = i + 1
			st.lists[li].count = n + 1
			return i + 1, nil
		default:
			return i, errSyntax
		}
	}
}

// verdict returns whether key (a kind byte followed by a shape of that
// kind) is valid, from the memo or else from CUE.
func (c *Checker) verdict(k kind, key []byte) bool {
	if valid, ok := c.memo.get(key); ok {
		return valid
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Another goroutine may have evaluated the shape while this one waited.
	if valid, ok := c.memo.get(key); ok {
		return valid
	}
	valid := c.validShape(k, key[1:])
	c.memo.put(key, valid)
	return valid
}

// explain reports the violations of a blob whose skeleton or some list
// elements failed. It evaluates, in one CUE evaluation, the real blob with
// the split lists reduced to their failing elements: elements that pass
// have no errors and cannot change how CUE reports the others, so this gives
// exactly what CUE reports for the whole blob, once the element indexes are
// mapped back.
func (c *Checker) explain(st *checkState, k kind, blob []byte) []Violation {
	reduced := make([]byte, 0, len(blob))
	origIndex := make(map[string][]int, len(st.lists))
	var nested []violation
	from := 0
	next := 0 // next failed element; st.failed is in blob order
	for li, l := range st.lists {
		reduced = append(reduced, blob[from:l.start]...)
		reduced = append(reduced, '[')
		var idx []int
		for ; next < len(st.failed) && st.failed[next].list == li; next++ {
			f := st.failed[next]
			if len(idx) > 0 {
				reduced = append(reduced, ',')
			}
			if f.constraint {
				// The property's cut goes in the blob; its nested
				// constraints that fail are reported on their own.
				var vs []violation
				reduced, vs = c.explainConstraint(st, blob, f, l.field.name, reduced)
				nested = append(nested, vs...)
			} else {
				reduced = append(reduced, blob[f.start:f.end]...)
			}
			idx = append(idx, f.index)
		}
		reduced = append(reduced, ']')
		origIndex[l.field.name] = idx
		from = l.end
	}
	reduced = append(reduced, blob[from:]...)
	vs := c.evalAll(k, reduced)
	for _, v := range vs {
		if len(v.path) >= 2 && !v.path[0].isIndex && v.path[1].isIndex {
			if idx, ok := origIndex[v.path[0].label]; ok && v.path[1].index < len(idx) {
				v.path[1].index = idx[v.path[1].index]
			}
		}
	}
	return finish(append(vs, nested...))
}

// constraintLiteral is how "olm.constraint" appears in a shape.
var constraintLiteral = []byte(`"olm.constraint"`)

// constraintProperty checks the property src[start:end] by parts when it
// is an olm.constraint property (constraint.go): its cut, and the cut of
// every constraint nested in its value. ok is false when it is not one.
func (c *Checker) constraintProperty(st *checkState, src []byte, start, end int) (valid, ok bool) {
	value, ok := constraintValue(src, start, end)
	if !ok {
		return false, false
	}
	nestedValid := true
	w := &st.walk
	w.reset(src[:end], func(cut []byte) bool {
		nestedValid = c.cutVerdict(st, kindConstraint, cut)
		return nestedValid
	})
	if _, err := w.node(value); err != nil {
		// Not for input the shaper read: it is the same grammar.
		return false, false
	}
	if len(w.lists) == 0 {
		// Nothing nested: the property is its own cut.
		return c.verdict(kindProperty, st.elem), true
	}
	st.cut = appendCut(st.cut[:0], src, start, end, w.lists)
	return nestedValid && c.cutVerdict(st, kindProperty, st.cut), true
}

// cutVerdict returns the verdict of a cut (JSON) checked as kind k.
func (c *Checker) cutVerdict(st *checkState, k kind, cut []byte) bool {
	depth := st.shaper.depth
	st.shaper.depth = 0
	shape, _, err := st.shaper.value(append(st.cutShape[:0], byte(k)), cut, 0)
	st.shaper.depth = depth
	st.cutShape = shape
	if err != nil {
		return false
	}
	return c.verdict(k, shape)
}

// explainConstraint appends the cut of the failed olm.constraint property
// f to reduced and returns the violations of the constraints nested in
// it that fail, each evaluated on its own (its cut) and reported at its
// path: the first maxNestedReported of them in document order, and a note
// of how many more.
func (c *Checker) explainConstraint(st *checkState, blob []byte, f failedElem, list string, reduced []byte) ([]byte, []violation) {
	value, _ := constraintValue(blob, f.start, f.end)
	w := &st.walk
	// First the failing constraints, by where they start.
	var failing []int
	w.reset(blob[:f.end], func(cut []byte) bool {
		if !c.cutVerdict(st, kindConstraint, cut) {
			failing = append(failing, w.start)
		}
		return true
	})
	if _, err := w.node(value); err != nil {
		return append(reduced, blob[f.start:f.end]...), nil
	}
	reduced = appendCut(reduced, blob, f.start, f.end, w.lists)
	slices.Sort(failing)
	more := len(failing) - maxNestedReported
	failing = failing[:min(len(failing), maxNestedReported)]
	// Then the violations of those, at their paths.
	valuePath := []pathElem{{label: list}, {index: f.index, isIndex: true}, {label: "value"}}
	var vs []violation
	w.reset(blob[:f.end], func(cut []byte) bool {
		if _, found := slices.BinarySearch(failing, w.start); !found {
			return true
		}
		prefix := make([]pathElem, 0, len(valuePath)+3*len(w.path))
		prefix = append(prefix, valuePath...)
		for _, s := range w.path {
			prefix = append(prefix, pathElem{label: s.key}, pathElem{label: "constraints"}, pathElem{index: s.index, isIndex: true})
		}
		for _, v := range c.evalAll(kindConstraint, bytes.Clone(cut)) {
			v.path = append(prefix[:len(prefix):len(prefix)], v.path...)
			vs = append(vs, v)
		}
		return true
	})
	if _, err := w.node(value); err != nil {
		return reduced, nil
	}
	if more > 0 {
		vs = append(vs, violation{path: valuePath, msg: fmt.Sprintf("%d more of its nested constraints fail; only the first %d are reported", more, maxNestedReported)})
	}
	return reduced, vs
}

// reference checks blob the direct way: the whole blob unified with its
// definition. Check falls back to it for input it cannot scan; the tests
// compare Check with it.
func (c *Checker) reference(k kind, blob []byte) []Violation {
	return finish(c.evalAll(k, blob))
}
