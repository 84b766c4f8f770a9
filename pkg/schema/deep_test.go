package schema

import (
	"fmt"
	"strings"
	"testing"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"

	"github.com/fastopm/fastopm/internal/testutil"
)

// TestSchemaDepth: schema.cue constrains nothing deeper than shapeDepth/2
// below the root of a part (a blob's skeleton, a list element, a nested
// constraint's cut), so shapes can stop at shapeDepth and the values
// given to CUE at realDepth. The recursion of #Constraint through
// #CompoundConstraint is cut (constraint.go): a definition met again
// below itself counts as the empty list that replaces it.
func TestSchemaDepth(t *testing.T) {
	f, err := parser.ParseFile("schema.cue", Source())
	if err != nil {
		t.Fatal(err)
	}
	defs := map[string]ast.Expr{}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.Field); ok {
			name, _, _ := ast.LabelName(fd.Label)
			defs[name] = fd.Value
		}
	}
	var depth func(e ast.Node, stack []string) int
	// members is the depth of a struct's members, without the struct.
	members := func(elts []ast.Decl, stack []string) int {
		d := 0
		for _, elt := range elts {
			switch elt := elt.(type) {
			case *ast.Field:
				d = max(d, depth(elt.Value, stack))
			case *ast.Comprehension:
				// Its fields join the enclosing struct.
				if s, ok := elt.Value.(*ast.StructLit); ok {
					d = max(d, depth(s, stack)-1)
				}
			case *ast.EmbedDecl:
				d = max(d, depth(elt.Expr, stack)-1)
			}
		}
		return d
	}
	depth = func(e ast.Node, stack []string) int {
		switch e := e.(type) {
		case *ast.StructLit:
			return 1 + members(e.Elts, stack)
		case *ast.ListLit:
			d := 0
			for _, elt := range e.Elts {
				if el, ok := elt.(*ast.Ellipsis); ok && el.Type != nil {
					d = max(d, depth(el.Type, stack))
				}
			}
			return 1 + d
		case *ast.Ident:
			def, ok := defs[e.Name]
			if !ok {
				return 0
			}
			for _, s := range stack {
				if s == e.Name {
					return 0
				}
			}
			return depth(def, append(stack, e.Name))
		case *ast.BinaryExpr:
			return max(depth(e.X, stack), depth(e.Y, stack))
		case *ast.UnaryExpr:
			return depth(e.X, stack)
		case *ast.ParenExpr:
			return depth(e.X, stack)
		}
		return 0
	}
	deepest := 0
	for _, name := range kindDefs {
		d := depth(defs[name], []string{name})
		t.Logf("%s: %d", name, d)
		deepest = max(deepest, d)
	}
	if deepest < 5 || deepest > shapeDepth/2 {
		t.Errorf("schema.cue constrains values %d deep; shapes stop at %d", deepest, shapeDepth)
	}
}

// nestLists is v in n lists, [[[v]]]: one byte a level, the most levels
// CUE can quote in maxArgument bytes.
func nestLists(v string, n int) string { return strings.Repeat("[", n) + v + strings.Repeat("]", n) }

// nestObjects is v in n objects in turn with lists, each level with a
// string beside.
func nestObjects(v string, n int) string {
	var b strings.Builder
	for i := range n {
		if i%2 == 0 {
			fmt.Fprintf(&b, `{"k":"level %d","v":`, i)
		} else {
			fmt.Fprintf(&b, `["level %d",`, i)
		}
	}
	b.WriteString(v)
	for i := n - 1; i >= 0; i-- {
		b.WriteByte("}]"[i%2])
	}
	return b.String()
}

// deepPositions are blobs with a place (%s) for a deep value: where the
// schema allows anything, where it refuses the field whatever it holds,
// and where it wants a string or a string list and quotes what it got.
var deepPositions = []struct{ schema, blob string }{
	{"olm.bundle", `{"schema":"olm.bundle","package":"p","name":"p.v1","image":"i","properties":[{"type":"example.com/x","value":%s}]}`},
	{"olm.bundle", `{"schema":"olm.bundle","package":"p","name":"p.v1","image":"i","properties":[{"type":"olm.gvk","value":{"group":"g","version":"v1","kind":"K","x":%s}}]}`},
	{"olm.bundle", `{"schema":"olm.bundle","package":"p","name":"p.v1","image":"i","properties":[{"type":"olm.package","value":{"packageName":"p","version":%s}}]}`},
	{"olm.bundle", `{"schema":"olm.bundle","package":"p","name":"p.v1","image":"i","properties":[{"type":"olm.constraint","value":{"failureMessage":%s,"gvk":{"group":"g","version":"v1","kind":"K"}}}]}`},
	{"olm.bundle", `{"schema":"olm.bundle","package":"p","name":"p.v1","image":"i","properties":[{"type":"olm.csv.metadata","value":{"annotations":{"a":%s},"crdDescriptions":{"owned":[{"name":"n","version":"v1","kind":"K","specDescriptors":[{"path":"p","x":%[1]s}]}]}}}]}`},
	{"olm.bundle", `{"schema":"olm.bundle","package":"p","name":"p.v1","image":"","extra":%s,"properties":[]}`},
	{"olm.package", `{"schema":"olm.package","name":"p","defaultChannel":"s","icon":{"base64data":%s,"mediatype":"image/png"}}`},
	{"olm.channel", `{"schema":"olm.channel","package":"p","name":"s","entries":[{"name":"a","skips":%s}]}`},
	{"olm.deprecations", `{"schema":"olm.deprecations","package":"p","entries":[{"reference":{"schema":"olm.bundle","name":"a"},"message":%s}]}`},
	{"example.com.other", `{"schema":"example.com.other","package":%s,"properties":[{"type":"x","value":%[1]s}]}`},
}

// TestDeepValues: values nested below what the schema constrains are
// shaped as {} or [] and cut for CUE, and get the violations CUE gives
// the whole value: compared with an evaluation that cuts nothing at 304
// levels (and 528 and 1000 in the corpus run), and, at the most a catalog
// nests (CUE took seconds for each such value), with those.
func TestDeepValues(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	depths := []int{realDepth + 40}
	if testutil.Corpus {
		depths = append(depths, 2*realDepth, 1000)
	}
	for _, pos := range deepPositions {
		k := blobKind(pos.schema)
		for _, nest := range []func(string, int) string{nestLists, nestObjects} {
			var first []Violation
			for _, n := range append(depths, maxDepth-20) {
				blob, _, err := canonical([]byte(fmt.Sprintf(pos.blob, nest("1", n))))
				if err != nil {
					t.Fatal(err)
				}
				got := c.Check(pos.schema, blob)
				c.Explain(pos.schema, blob, got)
				if n < maxDepth-20 {
					if d := diffViolations(got, finish(c.evalAllDepth(k, blob, maxDepth))); d != "" {
						t.Errorf("%d deep in %s: cutting the value changed the violations:\n%s", n, pos.blob, d)
					}
				}
				if first == nil {
					first = got
				} else if d := diffViolations(got, first); d != "" {
					t.Errorf("%d deep in %s: not the violations at %d deep:\n%s", n, pos.blob, depths[0], d)
				}
			}
		}
	}
	// No shape CUE saw holds the deep values (20 KB at 10000 levels).
	for i := range c.memo.shards {
		for key := range c.memo.shards[i].m {
			if len(key) > 1000 {
				t.Errorf("a shape of %d bytes was evaluated: %.200s", len(key), key)
			}
		}
	}
}
