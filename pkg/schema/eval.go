package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"cuelang.org/go/cue"
	cueerrors "cuelang.org/go/cue/errors"
	cuejson "cuelang.org/go/encoding/json"
)

// Stats reports what a Checker has done so far.
type Stats struct {
	// Shapes is the number of distinct shapes whose verdict is memoized.
	Shapes int
	// ShapeEvals is the number of CUE evaluations of shapes (memo misses).
	ShapeEvals int64
	// RealEvals is the number of CUE evaluations of real values, made to
	// report the violations of parts whose shape failed.
	RealEvals int64
}

// Stats returns the Checker's counters.
func (c *Checker) Stats() Stats {
	return Stats{
		Shapes:     c.memo.len(),
		ShapeEvals: c.shapeEvals.Load(),
		RealEvals:  c.realEvals.Load(),
	}
}

// validShape evaluates a shape of kind k with CUE. It must be called with
// c.mu held.
func (c *Checker) validShape(k kind, shape []byte) bool {
	c.shapeEvals.Add(1)
	u, err := c.unify(k, shape)
	if err != nil {
		return false
	}
	return u.Validate(cue.Concrete(true)) == nil
}

// unify builds data as a CUE value, its values nested deeper than
// realDepth cut (cutDeep), and unifies it with kind k's definition. It
// must be called with c.mu held.
func (c *Checker) unify(k kind, data []byte) (cue.Value, error) {
	return c.unifyDepth(k, data, realDepth)
}

// unifyDepth is unify, cutting values nested deeper than depth.
func (c *Checker) unifyDepth(k kind, data []byte, depth int) (cue.Value, error) {
	expr, err := cuejson.Extract("blob", cutDeep(data, depth))
	if err != nil {
		return cue.Value{}, err
	}
	return c.defs[k].Unify(c.ctx.BuildExpr(expr)), nil
}

// pathElem is one step of a violation's path: a label in CUE syntax or a
// list index.
type pathElem struct {
	label   string
	index   int
	isIndex bool
}

// violation is a Violation before formatting.
type violation struct {
	path []pathElem
	msg  string
}

// evalReal evaluates the real value data against kind k and returns CUE's
// errors.
func (c *Checker) evalReal(k kind, data []byte, depth int) []violation {
	c.realEvals.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	u, err := c.unifyDepth(k, data, depth)
	if err != nil {
		var x any
		if jerr := json.Unmarshal(data, &x); jerr != nil {
			err = jerr
		}
		return []violation{{msg: shorten("invalid JSON: " + err.Error())}}
	}
	var vs []violation
	for _, e := range cueerrors.Errors(u.Validate(cue.Concrete(true))) {
		format, args := e.Msg()
		for i, a := range args {
			// A value quoted in full would bury the message's end
			// (the types that conflict) under a long string.
			if s := fmt.Sprint(a); len(s) > maxArgument {
				args[i] = shortenTo(s, maxArgument)
			}
		}
		vs = append(vs, violation{
			path: errorPath(k, e.Path()),
			msg:  shorten(fmt.Sprintf(format, args...)),
		})
	}
	return vs
}

// maxRounds bounds how many times evalAll evaluates a blob again.
const maxRounds = 8

// evalAll returns every violation of data, not only the first of each
// object: CUE reports one conflict of a struct and hides the others
// (an icon whose base64data is null hides that its "type" is not a
// field). So the fields reported are removed and what is left is
// evaluated again, until nothing new is found. Only object members are
// removed (never a list element, which would move the indexes of the
// others), and a path is reported once, with its first message.
func (c *Checker) evalAll(k kind, data []byte) []violation {
	return c.evalAllDepth(k, data, realDepth)
}

// evalAllDepth is evalAll, cutting values nested deeper than depth
// (cutDeep).
func (c *Checker) evalAllDepth(k kind, data []byte, depth int) []violation {
	vs := c.evalReal(k, data, depth)
	seen := make(map[string]bool, len(vs))
	for _, v := range vs {
		seen[formatPath(v.path)] = true
	}
	last := vs
	var removed [][]pathElem // in every round so far
	for range maxRounds {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var x any
		if dec.Decode(&x) != nil {
			break
		}
		n := len(removed)
		for _, v := range last {
			if removeMember(x, v.path) {
				removed = append(removed, v.path)
			}
		}
		if len(removed) == n {
			break
		}
		next, err := json.Marshal(x)
		if err != nil {
			break
		}
		data, last = next, nil
		for _, v := range c.evalReal(k, data, depth) {
			// What encloses a removed member, or was in it, may now fail
			// for want of it (a disjunction left unresolved, the fields of
			// an object that was a string): not a problem of the blob.
			if slices.ContainsFunc(removed, func(r []pathElem) bool { return isPrefix(v.path, r) || isPrefix(r, v.path) }) {
				continue
			}
			if p := formatPath(v.path); !seen[p] {
				seen[p] = true
				last = append(last, v)
			}
		}
		if len(last) == 0 {
			break
		}
		vs = append(vs, last...)
	}
	return vs
}

// isPrefix reports whether path p is q or encloses it.
func isPrefix(p, q []pathElem) bool {
	return len(p) <= len(q) && comparePath(p, q[:len(p)]) == 0
}

// removeMember deletes the object member at path from x, decoded JSON; it
// reports whether there was one. A path that ends in a list index, or does
// not lead to a member, removes nothing.
func removeMember(x any, path []pathElem) bool {
	if len(path) == 0 || path[len(path)-1].isIndex {
		return false
	}
	for _, e := range path[:len(path)-1] {
		switch v := x.(type) {
		case map[string]any:
			if e.isIndex {
				return false
			}
			x = v[memberName(e.label)]
		case []any:
			if !e.isIndex || e.index < 0 || e.index >= len(v) {
				return false
			}
			x = v[e.index]
		default:
			return false
		}
	}
	m, ok := x.(map[string]any)
	if !ok {
		return false
	}
	name := memberName(path[len(path)-1].label)
	if _, ok := m[name]; !ok {
		return false
	}
	delete(m, name)
	return true
}

// memberName is a JSON member name from a label in CUE syntax, which
// quotes names that are not identifiers.
func memberName(label string) string {
	if strings.HasPrefix(label, `"`) {
		if s, err := strconv.Unquote(label); err == nil {
			return s
		}
	}
	return label
}

// maxMessage bounds the length of a violation message: CUE quotes
// conflicting values in full, and catalogs hold megabyte-long strings.
const maxMessage = 1024

// maxArgument bounds the length of a value quoted in a message.
const maxArgument = 200

// shorten cuts msg to maxMessage bytes (on a UTF-8 boundary), marking the
// cut with an ellipsis.
func shorten(msg string) string { return shortenTo(msg, maxMessage) }

func shortenTo(msg string, max int) string {
	if len(msg) <= max {
		return msg
	}
	n := max
	for n > 0 && !utf8.RuneStart(msg[n]) {
		n--
	}
	return msg[:n] + "…"
}

// errorPath converts the path of a CUE error on kind k's definition into
// path elements. CUE starts the path with the definition's own
// label, which is dropped. A label written as bare digits is a list index:
// CUE quotes object keys that are not identifiers.
func errorPath(k kind, p []string) []pathElem {
	if len(p) > 0 && p[0] == kindDefs[k] {
		p = p[1:]
	}
	out := make([]pathElem, 0, len(p))
	for _, s := range p {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 && s[0] >= '0' && s[0] <= '9' {
			out = append(out, pathElem{index: n, isIndex: true})
			continue
		}
		out = append(out, pathElem{label: s})
	}
	return out
}

// formatPath writes p as a CUE path: labels joined by dots, indexes in
// brackets.
func formatPath(p []pathElem) string {
	var b strings.Builder
	for _, e := range p {
		if e.isIndex {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(e.index))
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(e.label)
	}
	return b.String()
}

func comparePath(a, b []pathElem) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := a[i], b[i]
		switch {
		case x.isIndex && y.isIndex:
			if x.index != y.index {
				return x.index - y.index
			}
		case x.isIndex:
			return -1
		case y.isIndex:
			return 1
		default:
			if c := strings.Compare(x.label, y.label); c != 0 {
				return c
			}
		}
	}
	return len(a) - len(b)
}

// finish sorts violations by path (indexes in numeric order) and message,
// drops duplicates and formats them.
func finish(vs []violation) []Violation {
	if len(vs) == 0 {
		return nil
	}
	slices.SortFunc(vs, func(a, b violation) int {
		if c := comparePath(a.path, b.path); c != 0 {
			return c
		}
		return strings.Compare(a.msg, b.msg)
	})
	out := make([]Violation, 0, len(vs))
	for i, v := range vs {
		if i > 0 && comparePath(v.path, vs[i-1].path) == 0 && v.msg == vs[i-1].msg {
			continue
		}
		out = append(out, Violation{Path: formatPath(v.path), Message: v.msg})
	}
	return out
}
