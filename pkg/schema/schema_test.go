package schema

import (
	"sort"
	"strings"
	"testing"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
)

// TestSchemaLiterals pins the string literals the shape abstraction keeps
// (adding a literal to schema.cue is fine, but should be a conscious
// change) and checks the labels it keeps.
func TestSchemaLiterals(t *testing.T) {
	c := sharedChecker(t)
	want := []string{
		"",
		"AllNamespaces", "MultiNamespace", "OwnNamespace", "SingleNamespace",
		"olm.bundle", "olm.bundle.object", "olm.channel", "olm.constraint",
		"olm.csv.metadata", "olm.deprecations", "olm.gvk", "olm.gvk.required",
		"olm.package", "olm.package.required",
	}
	var got []string
	for s := range c.voc.lits.set {
		got = append(got, s)
	}
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("literals of schema.cue:\ngot  %q\nwant %q", got, want)
	}
	for _, s := range got {
		// str() writes kept literals between quotes without escaping.
		if strings.ContainsAny(s, "\"\\") || strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r > 0x7e }) >= 0 {
			t.Errorf("literal %q is not plain printable ASCII", s)
		}
		if len(s) > c.voc.lits.maxLen {
			t.Errorf("literal %q longer than maxLen %d", s, c.voc.lits.maxLen)
		}
	}
	if _, ok := c.voc.lits.set[placeholder]; ok {
		t.Errorf("placeholder %q is a schema literal", placeholder)
	}
	if len(c.voc.labels.set) < 50 {
		t.Errorf("only %d labels collected from schema.cue", len(c.voc.labels.set))
	}
	for l := range c.voc.labels.set {
		if strings.ContainsAny(l, "\"\\") || strings.IndexFunc(l, func(r rune) bool { return r < 0x20 || r > 0x7e }) >= 0 {
			t.Errorf("label %q is not plain printable ASCII", l)
		}
		if strings.HasPrefix(l, keyPlaceholderPrefix) || l == "" {
			t.Errorf("label %q could be taken for an anonymized key", l)
		}
	}
	for _, l := range []string{"schema", "package", "name", "properties", "type", "value", "x-descriptors", "constraints", "reference"} {
		if _, ok := c.voc.labels.set[l]; !ok {
			t.Errorf("label %q not collected", l)
		}
	}
}

// TestSchemaLexicalRules scans schema.cue as text, independently of the AST
// walk that New uses to collect literals: no regular expressions, no
// bounds, no builtin packages, and every string literal that is not a label
// is known to the shape abstraction.
func TestSchemaLexicalRules(t *testing.T) {
	c := sharedChecker(t)
	src := Source()
	var code strings.Builder // src without comments and string contents
	type lit struct {
		text  string
		label bool
		line  int
	}
	var lits []lit
	line := 1
	for i := 0; i < len(src); i++ {
		switch ch := src[i]; {
		case ch == '\n':
			line++
			code.WriteByte(ch)
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			i--
		case ch == '"':
			if strings.HasPrefix(src[i:], `"""`) {
				t.Fatalf("line %d: multi-line strings are not supported by this test", line)
			}
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					t.Errorf("line %d: escapes in string literals are not allowed", line)
					j++
				}
				if src[j] == '\n' {
					t.Fatalf("line %d: unterminated string", line)
				}
				j++
			}
			rest := strings.TrimLeft(src[j+1:], " \t")
			rest = strings.TrimPrefix(strings.TrimPrefix(rest, "?"), "!")
			lits = append(lits, lit{text: src[i+1 : j], label: strings.HasPrefix(rest, ":"), line: line})
			code.WriteString(`""`)
			i = j
		default:
			code.WriteByte(ch)
		}
	}
	for _, l := range lits {
		if l.label {
			continue
		}
		if _, ok := c.voc.lits.set[l.text]; !ok {
			t.Errorf("line %d: string literal %q is not known to the shape abstraction", l.line, l.text)
		}
	}
	forbidden := []struct{ tok, why string }{
		{"=~", "regular expression"},
		{"!~", "regular expression"},
		{"strings.", "strings builtin"},
		{"list.", "list builtin"},
		{"regexp.", "regexp builtin"},
		{"math.", "math builtin"},
		{"len(", "length builtin"},
		{"import", "import"},
		{"<", "bound"},
		{">", "bound"},
		{"\\(", "interpolation"},
	}
	for _, f := range forbidden {
		if strings.Contains(code.String(), f.tok) {
			t.Errorf("schema.cue uses %q (%s)", f.tok, f.why)
		}
	}
}

// TestSchemaASTRules walks schema.cue's syntax tree: every list is an open
// list [...X] (no length or position constraints), the only pattern
// constraint is [string], conditions only compare a struct's own type or
// schema field, and only definitions, _Meta and basic types are referenced
// (so no list element depends on anything outside it).
func TestSchemaASTRules(t *testing.T) {
	f, err := parser.ParseFile("schema.cue", Source())
	if err != nil {
		t.Fatal(err)
	}
	basic := map[string]bool{"string": true, "int": true, "bool": true, "number": true, "float": true, "null": true, "_": true, "_Meta": true}
	var walk func(n ast.Node, inCond bool)
	walk = func(n ast.Node, inCond bool) {
		ast.Walk(n, func(n ast.Node) bool {
			pos := n.Pos().String()
			switch n := n.(type) {
			case *ast.Field:
				// Pattern constraints must treat every key alike, since
				// shapes anonymize keys that are not labels.
				if l, ok := n.Label.(*ast.ListLit); ok {
					if id, ok := singleIdent(l); !ok || id != "string" {
						t.Errorf("%s: pattern constraint other than [string]", pos)
					}
				}
				walk(n.Value, inCond)
				return false
			case *ast.ListLit:
				if len(n.Elts) != 1 {
					t.Errorf("%s: list with %d elements; only [...X] is allowed", pos, len(n.Elts))
				} else if _, ok := n.Elts[0].(*ast.Ellipsis); !ok {
					t.Errorf("%s: list element %T; only [...X] is allowed", pos, n.Elts[0])
				}
			case *ast.Comprehension:
				for _, cl := range n.Clauses {
					ifc, ok := cl.(*ast.IfClause)
					if !ok {
						t.Errorf("%s: comprehension clause %T; only if is allowed", pos, cl)
						continue
					}
					walk(ifc.Condition, true)
				}
				walk(n.Value, inCond)
				return false
			case *ast.Ident:
				switch {
				case inCond && (n.Name == "type" || n.Name == "schema"):
				case strings.HasPrefix(n.Name, "#"), basic[n.Name]:
				default:
					t.Errorf("%s: reference to %s", pos, n.Name)
				}
			case *ast.UnaryExpr:
				if n.Op != token.NEQ {
					t.Errorf("%s: unary %s; only != is allowed", pos, n.Op)
				}
			case *ast.BinaryExpr:
				switch n.Op {
				case token.AND, token.OR:
				case token.EQL, token.NEQ:
					if !inCond {
						t.Errorf("%s: comparison outside a condition", pos)
					}
				default:
					t.Errorf("%s: operator %s", pos, n.Op)
				}
			case *ast.CallExpr, *ast.IndexExpr, *ast.SliceExpr, *ast.SelectorExpr,
				*ast.ImportDecl, *ast.ImportSpec, *ast.Interpolation, *ast.LetClause, *ast.Alias:
				t.Errorf("%s: %T is not allowed", pos, n)
			}
			return true
		}, nil)
	}
	walk(f, false)
}

func singleIdent(l *ast.ListLit) (string, bool) {
	if len(l.Elts) != 1 {
		return "", false
	}
	id, ok := l.Elts[0].(*ast.Ident)
	if !ok {
		return "", false
	}
	return id.Name, true
}

// TestNoLengthOrPositionConstraints: the reference verdict of every fixture
// and table blob stays the same when each list is reversed or has its
// elements repeated.
func TestNoLengthOrPositionConstraints(t *testing.T) {
	c := sharedChecker(t)
	blobs := fixtures(t)
	for _, tc := range checkCases {
		if tc.deep {
			continue
		}
		data, _, err := canonical([]byte(tc.blob))
		if err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, testBlob{name: tc.name, schema: tc.schema, data: data})
	}
	for _, b := range blobs {
		_, v, err := canonical(b.data)
		if err != nil {
			t.Fatal(err)
		}
		valid := referenceCheck(c, b.schema, b.data) == nil
		for _, variant := range []func(any) any{reverseLists, duplicateLists} {
			data, err := encodeCanonical(variant(v))
			if err != nil {
				t.Fatal(err)
			}
			if got := referenceCheck(c, b.schema, data) == nil; got != valid {
				t.Errorf("%s: valid=%v, but %v with lists reordered or repeated", b.name, valid, got)
			}
		}
	}
}
